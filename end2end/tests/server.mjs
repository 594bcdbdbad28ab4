// Starts a clues-lab server on a fresh database for the browser tests (SQLite, or a new
// database on the PostgreSQL server CLUES_TEST_POSTGRES names), with a researcher and a worker
// account, and Debian's Chromium driven by playwright-core.
import { spawn, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import net from 'node:net';
import { chromium } from 'playwright-core';
import assert from 'node:assert/strict';

// Defaults fit `cargo leptos end-to-end` (target/ in the workspace); .ci/test sets both.
const TARGET = process.env.CARGO_TARGET_DIR || new URL('../../target', import.meta.url).pathname;
const BIN = process.env.CLUES_BIN || `${TARGET}/debug/clues-lab`;
const SITE = process.env.CLUES_SITE_ROOT || `${TARGET}/site`;
export const RESULTS = new URL('../test-results/', import.meta.url).pathname;

export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

async function waitForPort(port, child, ms = 30000) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    const ok = await new Promise((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => { s.end(); resolve(true); });
      s.on('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`server did not listen on ${port}`);
}

export const USERS = {
  admin: { name: 'ada', password: 'ada-password-1' },
  researcher: { name: 'rita', password: 'rita-password-1' },
  worker: { name: 'walt', password: 'walt-password-1' },
};

/**
 * Starts server and browser; returns { base, browser, dir, sql, cli, stop }. `prepare(cli)` runs
 * before the server starts, with `cli(...args)` calling the binary on the test database;
 * `sql(statement, ...params)` runs SQL there (`$1`, … parameters) and returns the rows.
 * Options: `serveArgs` (more arguments of `serve`), `host` (the host name of `base`, default
 * 127.0.0.1), `browserArgs` (more Chromium flags).
 */
export async function start(prepare, { serveArgs = [], host = '127.0.0.1', browserArgs = [] } = {}) {
  if (!existsSync(BIN)) throw new Error(`no server binary at ${BIN}: build it (.ci/build) or set CLUES_BIN`);
  mkdirSync(RESULTS, { recursive: true });
  const dir = mkdtempSync(join(tmpdir(), 'clues-e2e-'));
  const pg = process.env.CLUES_TEST_POSTGRES;
  const database = pg
    ? `${pg.replace(/\/$/, '')}/e2e_${process.pid}_${Math.floor(Math.random() * 1e9)}`
    : `sqlite://${join(dir, 'e2e.db')}`;
  for (const [role, u] of Object.entries(USERS)) {
    execFileSync(BIN, ['--database', database, 'user', 'add', u.name, '--role', role], {
      env: { ...process.env, CLUES_PASSWORD: u.password },
    });
  }
  const cli = (...args) => execFileSync(BIN, ['--database', database, ...args], { encoding: 'utf8' });
  if (prepare) {
    await prepare(cli, dir);
  }
  const port = await freePort();
  const server = spawn(BIN, ['--database', database, 'serve', '--addr', `127.0.0.1:${port}`, '--site-root', SITE, ...serveArgs], {
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, RUST_LOG: 'warn' },
  });
  await waitForPort(port, server);
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic', ...browserArgs],
  });
  const sql = (statement, ...params) => JSON.parse(execFileSync(BIN,
    ['--database', database, 'db', 'query', statement, ...params.map((v) => JSON.stringify(v))],
    { encoding: 'utf8' }));
  return {
    base: `http://${host}:${port}`,
    browser,
    dir,
    sql,
    cli,
    async stop() {
      await browser.close();
      server.kill('SIGINT');
    },
  };
}

/**
 * In every test page: `rangeOfText(root, needle)`, a DOM range over the first `needle` in
 * `root`'s text, across the text nodes that highlighted answers split it into.
 */
function rangeOfTextScript() {
  window.rangeOfText = (root, needle) => {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    const nodes = [];
    let text = '';
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      nodes.push([n, text.length]);
      text += n.data;
    }
    const i = text.indexOf(needle);
    if (i < 0) throw new Error(`not in the text: ${needle}`);
    const at = (k, end) => {
      const hit = nodes.filter(([n, start]) => (end ? start < k : start <= k) && k <= start + n.data.length);
      const [n, start] = hit[end ? 0 : hit.length - 1];
      return [n, k - start];
    };
    const r = document.createRange();
    r.setStart(...at(i, false));
    r.setEnd(...at(i + needle.length, true));
    return r;
  };
}

/** A new page that records console errors and failed requests. */
export async function newPage(browser, options = {}) {
  const page = await (options.context ?? browser).newPage();
  await page.addInitScript(rangeOfTextScript);
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') page.errors.push(`console: ${m.text()}`); });
  page.on('response', (r) => { if (r.status() >= 400) page.errors.push(`HTTP ${r.status()}: ${r.url()}`); });
  return page;
}

/** Loads a page and waits until the WebAssembly bundle has hydrated it. */
export async function openHydrated(page, url) {
  await page.goto(url);
  await page.waitForSelector('main[data-hydrated="true"]', { timeout: 30000 });
}

/** Follows a study link as a worker does: the start page (no script), then Start. */
export async function joinStudy(page, url) {
  await page.goto(url);
  await page.click('form[method="post"] button[type="submit"]');
  await page.waitForSelector('main[data-hydrated="true"]', { timeout: 30000 });
}

/** Picks `label` and the confidence "Agree" and presses Submit, by keys alone (Space on the
 * focused radio, Enter on Submit), as a keyboard-only worker does. */
export async function answerLabelByKeys(page, label) {
  await page.focus(`input[name="label"][value="${label}"]`);
  await page.keyboard.press('Space');
  await page.focus('input[name="confidence"][value="4"]');
  await page.keyboard.press('Space');
  await page.focus('button.submit');
  await page.keyboard.press('Enter');
}

/** Opens a staff page as a signed-in crowd worker: the server answers 403 with a page that says
 * whom it is for (no staff page is rendered for a worker). */
export async function staffPageRefused(page, url) {
  const res = await page.goto(url);
  assert.equal(res.status(), 403, url);
  assert.match(await page.textContent('[role="alert"]'), /This page is for researchers and admins/);
  page.errors = page.errors.filter((e) => !e.startsWith('HTTP 403') && !e.includes('status of 403'));
}

export async function signIn(page, base, { name, password }) {
  await openHydrated(page, `${base}/`);
  await page.fill('input[name="name"]', name);
  await page.fill('input[name="password"]', password);
  await page.click('button[type="submit"]');
  // Signed in, or refused: the links in the header work before either.
  await page.waitForSelector('.whoami, .login [role="alert"]');
}

/**
 * An SST-2 folder in the CLUES layout, written for the tests: 10 alternating training reviews
 * (split 1) and the test reviews given as [text, label] pairs.
 */
export function writeSst(sstDir, tests) {
  mkdirSync(sstDir, { recursive: true });
  const review = (id, context, label) => JSON.stringify({ answer: [label], question: 'positive or negative?', id, context });
  const train = Array.from({ length: 10 }, (_, i) =>
    review(i + 1, `${i % 2 ? 'a dull, tired' : 'a bright, moving'} film number ${i + 1} `, i % 2 ? 'negative' : 'positive'));
  writeFileSync(join(sstDir, 'sst_train_10_1.jsonl'), train.join('\n') + '\n');
  writeFileSync(join(sstDir, 'sst_test.jsonl'), tests.map(([text, label], i) => review(i + 1, text, label)).join('\n') + '\n');
}

/**
 * A SQuAD v2 folder in the CLUES layout with one test file: every item asks `question` about the
 * same `context`, its answers given as strings (their code-point offsets are found in it).
 */
export function writeSquad(squadDir, context, items) {
  mkdirSync(squadDir, { recursive: true });
  const cpOffset = (needle) => [...context.slice(0, context.indexOf(needle))].length;
  const line = ([id, question, answers]) => JSON.stringify({
    question, id, context, is_impossible: answers.length === 0,
    answer: answers.map((a) => ({ text: a, answer_start: cpOffset(a) })),
  });
  writeFileSync(join(squadDir, 'squad-v2_test.jsonl'), items.map(line).join('\n') + '\n');
}

/**
 * A text-to-text task of our own (`colours`: what colour is a thing?), sampled for the five
 * seeds and made into the study task `xf-colours-s100`; `tests` are its test lines
 * (question, then each accepted answer, tab-separated).
 */
export function importColours(cli, dir, tests) {
  writeFileSync(join(dir, 'colours.tsv'), ['grass', 'sky', 'snow', 'coal', 'blood', 'sun', 'sea', 'night']
    .map((w, i) => `What colour is ${w}?\t${['green', 'blue', 'white', 'black', 'red', 'yellow', 'blue', 'black'][i]}`).join('\n') + '\n');
  writeFileSync(join(dir, 'colours-test.tsv'), tests.map((t) => t.join('\t')).join('\n') + '\n');
  cli('import', 'crossfit-source', '--task', 'colours', '--source', join(dir, 'colours.tsv'), '--test', join(dir, 'colours-test.tsv'),
    '--kind', 'text-to-text', '--k', '2', '--metric', 'EM', '--ontology', 'qa/closed-book qa');
  cli('crossfit', 'study-task', '--task', 'colours', '--seed', '100');
}

/** Drags the real mouse over `needle` in the span context. */
export async function selectByMouse(page, needle) {
  const box = await page.evaluate((needle) => {
    const r = window.rangeOfText(document.querySelector('.span-context'), needle);
    const rects = [...r.getClientRects()].filter((x) => x.width > 0);
    const a = rects[0];
    const b = rects[rects.length - 1];
    return { x1: a.left + 1, y1: a.top + a.height / 2, x2: b.right - 1, y2: b.top + b.height / 2 };
  }, needle.replace(/\r\n/g, '\n'));
  await page.mouse.move(box.x1, box.y1);
  await page.mouse.down();
  await page.mouse.move(box.x2, box.y2, { steps: 8 });
  await page.mouse.up();
}
