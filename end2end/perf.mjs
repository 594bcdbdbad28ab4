// The worker page's first load on a cheap phone: a 390x844 viewport with touch, the CPU slowed
// 4x, a network of 150 ms round trip and 1.6 Mbit/s down (750 kbit/s up), empty cache:
//   link  - the protocol's path: the study link's start page, read for READ_MS (the bundle is
//           preloaded meanwhile), then Start; interactive = from the click until hydrated.
//           Bytes: everything from opening the link on. Asserted: <= 250 KiB, interactive
//           <= 2 s after Start, and the item (question and text) on the first screen.
//   cold  - the study page opened directly with an empty cache (a signed-in worker skipping
//           the start page): reported, not asserted.
// Usage (release build): CLUES_BIN=<target>/release/clues-lab CLUES_SITE_ROOT=<target>/site-release node perf.mjs
// or server/bench/worker-page.sh, which builds first.
import { start, writeSst } from './tests/server.mjs';
import { join } from 'node:path';

const TARGET_BYTES = 250 * 1024;
const TARGET_MS = 2000;
const READ_MS = Number(process.env.READ_MS || 3000);
const PHONE_NETWORK = { offline: false, latency: 150, downloadThroughput: 1.6e6 / 8, uploadThroughput: 750e3 / 8 };
const CPU_SLOWDOWN = 4;
const RUNS = Number(process.env.RUNS || 3);

const env = await start((cli, dir) => {
  writeSst(join(dir, 'fixture', 'SST-2'), [
    ['a joyous ride from start to finish, with a cast that shines in every scene ', 'positive'],
    ['a slog with no payoff ', 'negative'],
  ]);
  cli('import', 'clues', join(dir, 'fixture'));
  cli('study', 'create', '--task', 'SST-2', '--name', 'Perf study', '--scenarios', '0', '--annotators', '50', '--open');
});
const link = (pid) => `${env.base}/join/1?PROLIFIC_PID=${pid}&STUDY_ID=s&SESSION_ID=s`;

/** A fresh phone context with the phone's network and CPU, and a byte counter. */
async function throttled(page, context) {
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.emulateNetworkConditions', PHONE_NETWORK);
  await cdp.send('Emulation.setCPUThrottlingRate', { rate: CPU_SLOWDOWN });
  const bytes = new Map();
  const urls = new Map();
  cdp.on('Network.responseReceived', (e) => urls.set(e.requestId, new URL(e.response.url).pathname));
  cdp.on('Network.loadingFinished', (e) => bytes.set(e.requestId, e.encodedDataLength));
  return () => ({
    total: [...bytes.values()].reduce((a, b) => a + b, 0),
    files: [...bytes.entries()].map(([id, b]) => `${urls.get(id) ?? id}: ${b} B`),
  });
}

async function measure(kind, run) {
  const context = await env.browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  const page = await context.newPage();
  let counted;
  let t0;
  if (kind === 'link') {
    counted = await throttled(page, context);
    await page.goto(link(`perf-link-${run}`));
    await page.waitForTimeout(READ_MS);
    t0 = Date.now();
    await page.click('form[method="post"] button[type="submit"]');
  } else {
    // Joined without loading anything (the request shares the context's cookies).
    const r = await context.request.post(link(`perf-cold-${run}`), { maxRedirects: 0 });
    if (r.status() !== 303) throw new Error(`join: ${r.status()}`);
    counted = await throttled(page, context);
    t0 = Date.now();
    await page.goto(`${env.base}/study/1`, { waitUntil: 'commit' });
  }
  await page.waitForSelector('main[data-hydrated="true"]', { timeout: 60000 });
  const interactive = Date.now() - t0;
  const fold = await page.evaluate(() => ['.item .question', '.item .context']
    .map((s) => document.querySelector(s).getBoundingClientRect())
    .every((r) => r.top < innerHeight && r.top >= 0));
  await page.waitForLoadState('networkidle');
  const { total, files } = counted();
  await context.close();
  return { kind, run, total, interactive, fold, files };
}

let failed = false;
try {
  const results = [];
  for (let run = 1; run <= RUNS; run++) {
    results.push(await measure('link', run));
    results.push(await measure('cold', run));
  }
  for (const r of results) {
    console.log(`${r.kind} run ${r.run}: ${r.total} B on the wire (${(r.total / 1024).toFixed(0)} KiB), interactive after ${r.interactive} ms, item ${r.fold ? 'on' : 'NOT on'} the first screen`);
    for (const f of r.files) console.log(`    ${f}`);
  }
  for (const kind of ['link', 'cold']) {
    const rs = results.filter((r) => r.kind === kind);
    const worst = (k) => Math.max(...rs.map((r) => r[k]));
    console.log(`${kind}: worst of ${RUNS}: ${worst('total')} B, interactive ${worst('interactive')} ms`);
  }
  const link_ = results.filter((r) => r.kind === 'link');
  const worst = (k) => Math.max(...link_.map((r) => r[k]));
  if (worst('total') > TARGET_BYTES) { console.log(`FAIL: the study link's first load is over ${TARGET_BYTES} B`); failed = true; }
  if (worst('interactive') > TARGET_MS) { console.log(`FAIL: interactive later than ${TARGET_MS} ms after Start`); failed = true; }
  if (!link_.every((r) => r.fold)) { console.log('FAIL: the item is not on the first screen'); failed = true; }
  if (!failed) console.log(`ok: the study link's first load is within ${TARGET_BYTES} B and ${TARGET_MS} ms, the item on the first screen`);
} finally {
  await env.stop();
}
process.exit(failed ? 1 : 0);
