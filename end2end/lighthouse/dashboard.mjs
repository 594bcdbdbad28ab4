// Lighthouse (mobile: its default Moto G Power profile, 4x CPU slowdown, simulated slow 4G) on
// the researcher dashboard of the release build, signed in as a researcher. The database is the
// demo study with ROWS synthetic annotation rows in each of its two studies (`load fill`), which
// the page counts with `synthetic=1`: every score table and learning curve is drawn (checked
// before the runs). Prints each run's Performance score, LCP, TBT, FCP, CLS and Speed Index and
// the median of RUNS runs; fails when the median score is below TARGET. TEST_ITEMS=N adds a
// zero-shot study of an SST-2-shaped task of N items (written here) and fills that study alone
// with ROWS rows: TEST_ITEMS=210 ROWS=42000 is a study of 200 workers x 210 items. CROWD=N (with
// TEST_ITEMS): N crowd workers (`clues-lab load crowd`) answer that study over HTTP all through
// the runs, each pausing CROWD_PAUSE_MS (default 3000) after each answer as a reader would, so
// the page is measured live; each run also prints the first byte (Lighthouse's server response
// time), and the end how many answers the crowd stored meanwhile.
// Usage: server/bench/dashboard-lighthouse.sh [runs] (builds, installs Lighthouse, runs this).
import lighthouse from 'lighthouse';
import * as chromeLauncher from 'chrome-launcher';
import { mkdirSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { start, signIn, newPage, USERS, RESULTS } from '../tests/server.mjs';

const RUNS = Number(process.env.RUNS || 5);
const ROWS = Number(process.env.ROWS || 3000);
const TARGET = Number(process.env.TARGET || 95);
// `synthetic=1`: the report counts the synthetic workers of `load fill` (it leaves them out otherwise).
const PAGE = process.env.PAGE || '/dashboard?synthetic=1';

const TEST_ITEMS = Number(process.env.TEST_ITEMS || 0);
const CROWD = Number(process.env.CROWD || 0);
if (CROWD && !TEST_ITEMS) throw new Error('CROWD needs TEST_ITEMS: the crowd answers that study');

// The task and study of TEST_ITEMS, before the server starts (so the study is study 1).
function fullSize(cli, dir) {
  const data = join(dir, 'data', 'SST-2');
  mkdirSync(data, { recursive: true });
  const lines = (ids) => ids.map((i) => JSON.stringify({
    id: i,
    context: `review ${i}: a ${i % 2 === 0 ? 'bright, moving' : 'dull, tired'} film`,
    question: 'positive or negative?',
    answer: [i % 2 === 0 ? 'positive' : 'negative'],
  }) + '\n').join('');
  writeFileSync(join(data, 'sst_test.jsonl'), lines([...Array(TEST_ITEMS).keys()].map((i) => 1000 + i)));
  writeFileSync(join(data, 'sst_train_10_1.jsonl'), lines([...Array(10).keys()]));
  cli('import', 'clues', join(dir, 'data'));
  cli('study', 'create', '--task', 'SST-2', '--name', 'full-size', '--scenarios', '0', '--open',
    ...(CROWD ? ['--annotators', '100000'] : []));
}

// `load crowd` joins every worker from this one address, so its workers arrive at the
// per-address join limit (the crowd grows through the runs).
const env = await start(TEST_ITEMS ? fullSize : null, { serveArgs: [] });
let chrome;
let crowd;
let failed = false;
const answered = () => env.sql('SELECT COUNT(*) FROM assignment_items WHERE submitted_at IS NOT NULL')[0][0];
try {
  for (const study of TEST_ITEMS ? ['1'] : ['1', '2']) {
    env.cli('load', 'fill', '--study', study, '--rows', String(ROWS), '--tag', 'lighthouse');
  }
  let before = 0;
  let since = Date.now();
  if (CROWD) {
    crowd = spawn(process.env.CLUES_BIN, ['load', 'crowd', '--url', env.base, '--study', '1',
      '--workers', String(CROWD), '--seconds', '3600', '--pause-ms', process.env.CROWD_PAUSE_MS || '3000'],
    { stdio: 'ignore' });
    await new Promise((r) => setTimeout(r, 5000));
    before = answered();
    since = Date.now();
    console.log(`${CROWD} crowd workers answering study 1 (${before} answers stored so far)`);
  }
  // The session cookie of a signed-in researcher, sent by Lighthouse with every request.
  const page = await newPage(env.browser);
  await signIn(page, env.base, USERS.researcher);
  const cookie = (await page.context().cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
  // What is measured: the report drawn, not an empty page.
  const html = await (await page.request.get(`${env.base}${PAGE}`)).text();
  await page.goto(`${env.base}${PAGE}`);
  const rows = await page.locator('.dash-tables figure.report-table tbody tr').count();
  const charts = await page.locator('figure.chart svg').count();
  if (rows === 0 || charts === 0) throw new Error(`the dashboard shows ${rows} table rows and ${charts} charts`);
  console.log(`${PAGE}: ${(html.length / 1024).toFixed(0)} KiB of HTML, ${rows} table rows, ${charts} charts`);
  await page.close();

  chrome = await chromeLauncher.launch({
    chromePath: process.env.CHROMIUM || '/usr/bin/chromium',
    chromeFlags: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
  const metric = (lhr, id) => lhr.audits[id].numericValue;
  const runs = [];
  let version;
  for (let run = 1; run <= RUNS; run++) {
    const { lhr, report } = await lighthouse(`${env.base}${PAGE}`, {
      port: chrome.port,
      onlyCategories: ['performance'],
      extraHeaders: { Cookie: cookie },
      output: ['html', 'json'],
      logLevel: 'error',
    });
    version = lhr.lighthouseVersion;
    if (lhr.runtimeError) throw new Error(`Lighthouse: ${lhr.runtimeError.message}`);
    const landed = new URL(lhr.finalDisplayedUrl);
    if (landed.pathname + landed.search !== PAGE) throw new Error(`Lighthouse ended on ${lhr.finalDisplayedUrl}, not ${PAGE}`);
    writeFileSync(join(RESULTS, `lighthouse-${run}.html`), report[0]);
    writeFileSync(join(RESULTS, `lighthouse-${run}.json`), report[1]);
    const r = {
      score: Math.round(lhr.categories.performance.score * 100),
      lcp: metric(lhr, 'largest-contentful-paint'),
      tbt: metric(lhr, 'total-blocking-time'),
      fcp: metric(lhr, 'first-contentful-paint'),
      cls: metric(lhr, 'cumulative-layout-shift'),
      si: metric(lhr, 'speed-index'),
      bytes: metric(lhr, 'total-byte-weight'),
      ttfb: metric(lhr, 'server-response-time'),
    };
    runs.push(r);
    console.log(`run ${run}: Performance ${r.score}, LCP ${(r.lcp / 1000).toFixed(1)} s, TBT ${r.tbt.toFixed(0)} ms, `
      + `FCP ${(r.fcp / 1000).toFixed(1)} s, CLS ${r.cls.toFixed(3)}, Speed Index ${(r.si / 1000).toFixed(1)} s, ${(r.bytes / 1024).toFixed(0)} KiB, `
      + `first byte ${r.ttfb.toFixed(0)} ms`);
  }
  if (CROWD) {
    const n = answered() - before;
    const s = (Date.now() - since) / 1000;
    console.log(`the crowd stored ${n} answers during the runs (${s.toFixed(0)} s, ${(n / s).toFixed(1)} answers/s)`);
  }
  const median = (k) => runs.map((r) => r[k]).sort((a, b) => a - b)[Math.floor(runs.length / 2)];
  console.log(`median of ${RUNS} (Lighthouse ${version}, mobile): Performance ${median('score')}, `
    + `LCP ${(median('lcp') / 1000).toFixed(1)} s, TBT ${median('tbt').toFixed(0)} ms, CLS ${median('cls').toFixed(3)}, `
    + `first byte ${median('ttfb').toFixed(0)} ms; `
    + `reports in ${RESULTS}lighthouse-N.html`);
  if (median('score') < TARGET) { console.log(`FAIL: the median Performance score is below ${TARGET}`); failed = true; }
} finally {
  crowd?.kill();
  await chrome?.kill();
  await env.stop();
}
process.exit(failed ? 1 : 0);

