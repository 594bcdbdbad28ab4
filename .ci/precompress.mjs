// Writes `.br` and `.gz` siblings of the site's wasm, JS and CSS (the static server sends
// them to browsers that accept them). Usage: node .ci/precompress.mjs <pkg dir> [brotli quality]
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliCompressSync, gzipSync, constants } from 'node:zlib';

const [dir, quality = '11'] = process.argv.slice(2);
for (const name of readdirSync(dir)) {
  if (!/\.(wasm|js|css)$/.test(name)) continue;
  const path = join(dir, name);
  const data = readFileSync(path);
  const br = brotliCompressSync(data, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: Number(quality),
      [constants.BROTLI_PARAM_SIZE_HINT]: data.length,
    },
  });
  writeFileSync(`${path}.br`, br);
  writeFileSync(`${path}.gz`, gzipSync(data, { level: 9 }));
  console.log(`${name}: ${data.length} B, br ${br.length} B`);
}
