// The worker page's first load on a cheap phone: a 390x844 viewport with touch, the CPU slowed
// 4x, a network of 150 ms round trip and 1.6 Mbit/s down (750 kbit/s up), empty cache:
//   link  - the protocol's path: the study link's start page, read for READ_MS (the bundle is
//           preloaded meanwhile), then Start; interactive = from the click until hydrated.
//           Bytes: everything from opening the link on. On a label study (SST-2), whose page
//           loads the worker's bundle without the span form. Asserted: <= 200 KB (200,000 B),
//           interactive <= 2 s after Start, and the item (question and text) on the first screen.
//   spans - the same on a span study (SQuAD v2), whose page loads the bundle with the span
//           form. Asserted as the label study's: <= 200 KB, interactive <= 2 s after Start, the
//           item on the first screen.
//   cold  - the label study's page opened directly with an empty cache (a signed-in worker
//           skipping the start page): reported, not asserted.
// Usage (release build): CLUES_BIN=<target>/release/clues-lab CLUES_SITE_ROOT=<target>/site-release node perf.mjs
// or server/bench/worker-page.sh, which builds first.
import { start, writeSquad, writeSst } from './tests/server.mjs';
import { join } from 'node:path';

const TARGET_BYTES = { link: 200000, spans: 200000 };
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
  writeSquad(join(dir, 'fixture', 'SQuAD-v2'),
    'The Amazon river flows through Brazil, Peru and Colombia before it reaches the Atlantic Ocean near the city of Belem.',
    [['q1', 'Which ocean does the Amazon reach?', ['Atlantic Ocean']], ['q2', 'Which city is near its mouth?', ['Belem']]]);
  cli('import', 'clues', join(dir, 'fixture'));
  cli('study', 'create', '--task', 'SST-2', '--name', 'Perf study', '--scenarios', '0', '--annotators', '50', '--open');
  cli('study', 'create', '--task', 'SQuAD-v2', '--name', 'Perf span study', '--scenarios', '0', '--annotators', '50', '--open');
});
// Study 1 is the label study, study 2 the span study.
const link = (pid, study = 1) => `${env.base}/join/${study}?PROLIFIC_PID=${pid}&STUDY_ID=s&SESSION_ID=s`;

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
  if (kind !== 'cold') {
    counted = await throttled(page, context);
    await page.goto(link(`perf-${kind}-${run}`, kind === 'spans' ? 2 : 1));
    await page.waitForTimeout(READ_MS);
    t0 = Date.now();
    await page.click('form[method="post"] button[type="submit"]');
  } else {
    // Joined without loading anything, as the start page's script posts Start (the request
    // shares the context's cookies).
    const r = await context.request.post(link(`perf-cold-${run}`), { form: { script: '1' }, maxRedirects: 0 });
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
    for (const kind of ['link', 'spans', 'cold']) results.push(await measure(kind, run));
  }
  for (const r of results) {
    console.log(`${r.kind} run ${r.run}: ${r.total} B on the wire (${(r.total / 1024).toFixed(0)} KiB), interactive after ${r.interactive} ms, item ${r.fold ? 'on' : 'NOT on'} the first screen`);
    for (const f of r.files) console.log(`    ${f}`);
  }
  const worst = (kind, k) => Math.max(...results.filter((r) => r.kind === kind).map((r) => r[k]));
  for (const kind of ['link', 'spans', 'cold']) {
    console.log(`${kind}: worst of ${RUNS}: ${worst(kind, 'total')} B, interactive ${worst(kind, 'interactive')} ms`);
  }
  for (const kind of ['link', 'spans']) {
    const name = kind === 'link' ? 'the label study link' : 'the span study link';
    if (worst(kind, 'total') > TARGET_BYTES[kind]) { console.log(`FAIL: ${name}'s first load is over ${TARGET_BYTES[kind]} B`); failed = true; }
    if (worst(kind, 'interactive') > TARGET_MS) { console.log(`FAIL: ${name}: interactive later than ${TARGET_MS} ms after Start`); failed = true; }
    if (!results.filter((r) => r.kind === kind).every((r) => r.fold)) { console.log(`FAIL: ${name}: the item is not on the first screen`); failed = true; }
  }
  if (!failed) console.log(`ok: the study links' first loads are within ${TARGET_BYTES.link} B (labels) and ${TARGET_BYTES.spans} B (spans) and ${TARGET_MS} ms, the item on the first screen`);
} finally {
  await env.stop();
}
process.exit(failed ? 1 : 0);
