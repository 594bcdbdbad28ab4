// The model track in Chromium: the built-in baseline runs on a small SST-2 task of our own
// (command line), its runs show on /machines, and a run in progress updates live on the page
// without a reload, as do CrossFit's shared fine-tuning jobs; a researcher uploads another
// system's predictions on the page; the dashboard puts machine rows beside the human rows. A
// researcher queues a learner on the page, cancels and retries it, and a worker runs it; on a
// phone the page keeps to the screen (wide tables scroll in their own boxes) and queues by touch.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { start, newPage, openHydrated, signIn, writeSst, USERS } from './server.mjs';

let env;
let baselineOut;
before(async () => {
  env = await start((cli, dir) => {
    writeSst(join(dir, 'fixture', 'SST-2'), [
      ['a joyous ride from start to finish ', 'positive'],
      ['a slog with no payoff ', 'negative'],
      ['the cast shines in every scene ', 'positive'],
    ]);
    cli('import', 'clues', join(dir, 'fixture'));
    baselineOut = cli('baseline', '--task', 'SST-2');
  });
});
after(async () => { await env?.stop(); });

/** Runs SQL on the test database (the server keeps running). */
const sql = (statement, ...params) => env.sql(statement, ...params);

test('baseline runs are listed, a running evaluation shows live progress, predictions are uploaded', async () => {
  assert.match(baselineOut, /MiniLM-L6 span head \(baseline\) on SST-2 \(k=10, split=1\): S1 \d\.\d{4} \(official\)/);
  assert.match(baselineOut, /running on CPU/);
  const page = await newPage(env.browser);
  await signIn(page, env.base, USERS.researcher);
  await page.waitForSelector('a[href="/machines"]');
  await openHydrated(page, `${env.base}/machines`);
  const done = await page.$$eval('tr.run.done', (rows) => rows.map((r) => [...r.querySelectorAll('td')].map((c) => c.textContent)));
  assert.equal(done.length, 1);
  const stored = sql("SELECT s1 FROM machine_runs WHERE status = 'done'")[0][0];
  assert.equal(done[0][0], 'MiniLM-L6 span head (baseline)');
  assert.equal(done[0][6], (100 * stored).toFixed(1));

  // A run in progress (as the command line records it): the page follows it every second.
  const [[sys]] = sql("SELECT system_id FROM machine_runs LIMIT 1");
  const [[task]] = sql("SELECT task_id FROM machine_runs LIMIT 1");
  const [[id]] = sql("INSERT INTO machine_runs (system_id, task_id, k, split, status, source, settings_json, provider, done, total, started_at) VALUES ($1, $2, 20, 1, 'running', 'x', '{}', 'starting', 3, 10, 0) RETURNING id", sys, task);
  // Held by a worker of a shared grid: the row says who runs it and the time left, and the
  // grid's summary says what is queued, running and done, and who holds it.
  // A job is a row of `jobs` and its key in its kind's table, under the same id.
  const gridKey = (jobId, split) => sql("INSERT INTO grid_jobs (id, system, task_id, k, split) VALUES ($1, 'MiniLM-L6 fine-tuned', $2, 20, $3)", jobId, task, split);
  const [[job]] = sql("INSERT INTO jobs (kind, status, worker, lease_until, attempts, queued_at) VALUES ('grid', 'claimed', 'gpu-box:4242', $1, 1, 0) RETURNING id", Date.now() + 3600000);
  gridKey(job, 1);
  sql('UPDATE machine_runs SET grid_job_id = $1 WHERE id = $2', job, id);
  const [[queued]] = sql("INSERT INTO jobs (kind, status, queued_at) VALUES ('grid', 'queued', 0) RETURNING id");
  gridKey(queued, 2);
  await openHydrated(page, `${env.base}/machines`);
  const row = `tr.run[data-run="${id}"]`;
  assert.match(await page.textContent(row), /3 of 10 inputs/);
  assert.match(await page.textContent(row), /about [\d.]+ (s|min|h) left/);
  assert.match(await page.textContent(row), /on gpu-box:4242/);
  const grid = await page.$$eval('table.grids tr.grid-jobs td', (cells) => cells.map((c) => c.textContent));
  // The command line's frozen baseline ran as a grid of its own: one task, done.
  assert.deepEqual(grid, [
    'MiniLM-L6 fine-tuned', '1', '1', '0', '0', 'gpu-box:4242',
    'MiniLM-L6 span head (baseline)', '0', '0', '1', '0', 'none now',
  ]);
  assert.equal(await page.getAttribute(`${row} progress`, 'value'), '3');
  sql('UPDATE machine_runs SET done = 7 WHERE id = $1', id);
  await page.waitForFunction((sel) => document.querySelector(sel)?.textContent.includes('7 of 10 inputs'), row, { timeout: 10000 });
  sql("UPDATE machine_runs SET status = 'failed', error = 'stopped by the test', finished_at = 1000 WHERE id = $1", id);
  await page.waitForFunction((sel) => document.querySelector(sel)?.textContent.includes('stopped by the test'), row, { timeout: 10000 });

  // CrossFit's fine-tuning shared by workers: a seed held by a worker shows its progress, the
  // time left and who runs it, and is followed live until it is done; a failed seed says why.
  const [[xt]] = sql("INSERT INTO crossfit_tasks (name, ontology, metric, source) VALUES ('xf-demo', 'cls/sentiment analysis', 'ACC', 'demo') RETURNING id");
  const method = 'tiny-bart direct fine-tuning';
  const [[xj]] = sql("INSERT INTO jobs (kind, recipe_json, status, worker, lease_until, attempts, queued_at, started_at, done_updates, total_updates, progress) VALUES ('crossfit', '{}', 'claimed', 'gpu-box:77', $1, 2, 0, $2, 300, 9000, 'setting 1 of 9, update 300 of 1000') RETURNING id", Date.now() + 3600000, Date.now() - 60000);
  sql('INSERT INTO crossfit_jobs (id, method, task_id, seed) VALUES ($1, $2, $3, 100)', xj, method, xt);
  const [[failed]] = sql("INSERT INTO jobs (kind, recipe_json, status, attempts, queued_at, error) VALUES ('crossfit', '{}', 'failed', 1, 0, 'out of memory on the device') RETURNING id");
  sql('INSERT INTO crossfit_jobs (id, method, task_id, seed) VALUES ($1, $2, $3, 13)', failed, method, xt);
  await openHydrated(page, `${env.base}/machines`);
  const xfRow = `tr.job[data-job="${xj}"]`;
  const cells = await page.$$eval(`${xfRow} td`, (tds) => tds.map((c) => c.textContent));
  assert.deepEqual([cells[0], cells[1], cells[2], cells[4]], [method, 'xf-demo', '100', '2']);
  assert.match(cells[3], /^running\s+setting 1 of 9, update 300 of 1000\s+about [\d.]+ (s|min|h) left\s+on gpu-box:77$/);
  assert.equal(await page.getAttribute(`${xfRow} progress`, 'value'), '300');
  assert.match(await page.textContent('tr.job.failed'), /out of memory on the device/);
  const learning = await page.$$eval('table.learning tr.grid-jobs td', (tds) => tds.map((c) => c.textContent));
  assert.deepEqual(learning, [method, '0', '1', '0', '1', 'gpu-box:77']);
  sql("UPDATE jobs SET done_updates = 600, progress = 'setting 1 of 9, update 600 of 1000' WHERE id = $1", xj);
  await page.waitForFunction((sel) => document.querySelector(sel)?.textContent.includes('update 600 of 1000'), xfRow, { timeout: 10000 });
  sql("UPDATE jobs SET status = 'done', lease_until = NULL WHERE id = $1", xj);
  await page.waitForFunction((sel) => !document.querySelector(sel), xfRow, { timeout: 10000 });
  assert.deepEqual(await page.$$eval('table.learning tr.grid-jobs td', (tds) => tds.map((c) => c.textContent)), [method, '0', '0', '1', '1', 'none now']);

  // Upload of an LLM's predictions: a bad file is refused with its line, a good one is stored.
  const ids = sql("SELECT e.ext_id FROM examples e JOIN data_files f ON f.id = e.file_id JOIN tasks t ON t.id = f.task_id WHERE f.kind = 'test' AND t.name = 'SST-2' ORDER BY e.line_no").map((r) => r[0]);
  const file = join(env.dir, 'llm.jsonl');
  writeFileSync(file, ids.map((id) => JSON.stringify({ id, answer: ['positive'] })).join('\n') + '\n');
  const bad = join(env.dir, 'bad.jsonl');
  writeFileSync(bad, '{"id": "1", "answer": "positive"}\n');
  const choices = await page.$$eval('form.upload select[name="task"] option', (os) => os.map((o) => o.value));
  assert.ok(choices.includes('SST-2') && choices.includes('demo-SST-2'), choices.join());
  await page.selectOption('form.upload select[name="task"]', 'SST-2');
  await page.fill('form.upload input[name="system"]', 'LLM in-context');
  await page.fill('form.upload input[name="k"]', '10');
  await page.fill('form.upload input[name="split"]', '1');
  await page.setInputFiles('form.upload input[type="file"]', bad);
  page.errors = [];
  await page.click('form.upload button[type="submit"]');
  await page.waitForFunction(() => document.querySelector('.upload-result')?.textContent.startsWith('Not stored'));
  assert.match(await page.textContent('.upload-result'), /bad\.jsonl:1: needs an `answer` that is a list of strings/);
  page.errors = page.errors.filter((e) => !e.includes('/import/predictions') && !e.includes('status of 400'));
  await page.setInputFiles('form.upload input[type="file"]', file);
  await page.click('form.upload button[type="submit"]');
  await page.waitForFunction(() => /^(Stored|Not stored: llm)/.test(document.querySelector('.upload-result')?.textContent));
  assert.match(await page.textContent('.upload-result'), /^Stored: LLM in-context on SST-2 \(k=10, split=1\)/);
  await page.waitForFunction(() => [...document.querySelectorAll('tr.run.done td:first-child')].some((td) => td.textContent === 'LLM in-context'));
  const llm = sql("SELECT r.s1 FROM machine_runs r JOIN machine_systems s ON s.id = r.system_id WHERE s.name = 'LLM in-context'");
  assert.equal(llm[0][0], 2 / 3);

  // The dashboard: humans and machines in one table, the machine line on the curve.
  await openHydrated(page, `${env.base}/dashboard`);
  const header = await page.$$eval('#human-vs-machine-official thead tr:last-child th', (ths) => ths.map((t) => t.textContent));
  assert.deepEqual(header, ['Shots', 'Who', 'SST-2']);
  const rows = await page.$$eval('#human-vs-machine-official tbody tr', (trs) => trs.map((r) => [...r.querySelectorAll('td')].map((c) => c.textContent)));
  assert.deepEqual(rows.map((r) => r.slice(0, 2)), [
    ['10', 'Human'], ['10', 'LLM in-context'], ['10', 'MiniLM-L6 span head (baseline)'],
    ['10', 'Reference: majority label of the k shots'],
  ]);
  assert.equal(rows[1][2], '66.7 ± 0.0 (n=1)');
  assert.equal(rows[2][2], `${(100 * stored).toFixed(1)} ± 0.0 (n=1)`);
  // The 10 shots are 5 positive and 5 negative: the tie goes to the task's first label,
  // "positive", right on 2 of the 3 test reviews.
  assert.equal(rows[3][2], '66.7 ± 0.0 (n=1)');
  assert.ok(await page.$('svg g.series[data-name="MiniLM-L6 span head (baseline)"]'));
  assert.ok(await page.$('svg g.series[data-name="Reference: majority label of the k shots"] polyline[stroke-dasharray]'));
  assert.deepEqual(page.errors, []);
});

test('a learner queued on the page is checked, cancelled, retried and run by a worker', async () => {
  const page = await newPage(env.browser);
  await signIn(page, env.base, USERS.researcher);
  await page.waitForSelector('a[href="/machines"]');
  await openHydrated(page, `${env.base}/machines`);
  // No worker runs yet: the page says so, and what a worker does.
  assert.match(await page.textContent('p.empty.workers'), /No worker is running now/);
  const learners = await page.$$eval('form.queue select[name="learner"] option', (os) => os.map((o) => o.value));
  assert.deepEqual(learners, ['frozen-baseline', 'fine-tuning', 'onnx', 'prompt', 'in-context', 'crossfit', 'crossfit-upstream']);
  // A relative folder is refused with why; nothing is queued.
  const jobs = () => sql('SELECT COUNT(*) FROM jobs')[0][0];
  const before = jobs();
  await page.selectOption('form.queue select[name="learner"]', 'fine-tuning');
  await page.check('form.queue input[name="task"][value="SST-2"]');
  await page.fill('form.queue input[name="folder"]', 'models/bert');
  page.errors = [];
  await page.click('form.queue button[type="submit"]');
  await page.waitForSelector('form.queue .error');
  assert.match(await page.textContent('form.queue .error'), /absolute path/);
  assert.equal(jobs(), before);
  page.errors = page.errors.filter((e) => !e.includes('queue_learner') && !e.includes('status of 400'));
  // A k without a split is neither dropped nor guessed: the page says so and queues nothing.
  await page.fill('form.queue input[name="k"]', '10');
  await page.click('form.queue button[type="submit"]');
  await page.waitForFunction(() => /Give k and split together/.test(document.querySelector('form.queue .error')?.textContent ?? ''));
  assert.equal(jobs(), before);

  // The frozen baseline on SST-2's group k=10 split=1, run again: queued, cancelled, retried.
  await page.selectOption('form.queue select[name="learner"]', 'frozen-baseline');
  await page.check('form.queue input[name="task"][value="SST-2"]');
  await page.fill('form.queue input[name="k"]', '10');
  await page.fill('form.queue input[name="split"]', '1');
  await page.check('form.queue input[name="replace"]');
  await page.click('form.queue button[type="submit"]');
  await page.waitForFunction(() => /1 job of MiniLM-L6 span head \(baseline\) queued/.test(document.querySelector('form.queue .saved')?.textContent ?? ''));
  const [[job]] = sql('SELECT g.id FROM grid_jobs g JOIN jobs j ON j.id = g.id WHERE g.k = 10 AND g.split = 1 AND j.recipe_json IS NOT NULL');
  const row = `tr.grid-job[data-grid-job="${job}"]`;
  await page.waitForSelector(`${row}.queued`);
  await page.click(`${row} button.cancel`);
  await page.waitForSelector(`${row}.failed`);
  assert.match(await page.textContent(row), /cancelled by rita/);
  await page.click(`${row} button.retry`);
  await page.waitForSelector(`${row}.queued`);

  // A worker runs it; the page drops the job and lists the run.
  env.cli('worker', '--exit-when-idle', '--kinds', 'frozen-baseline', '--device', 'cpu', '--poll-seconds', '1');
  await page.waitForFunction((sel) => !document.querySelector(sel), row, { timeout: 15000 });
  assert.deepEqual(sql('SELECT status, attempts FROM jobs WHERE id = $1', job), [['done', 1]]);
  assert.deepEqual(page.errors, []);
});

test('on a phone the queue form fits the screen, its controls can be tapped, and it queues', async () => {
  const context = await env.browser.newContext({ viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true });
  const page = await newPage(env.browser, { context });
  await signIn(page, env.base, USERS.researcher);
  await page.waitForSelector('a[href="/machines"]');
  await openHydrated(page, `${env.base}/machines`);
  // Nothing lies beyond the screen's edge but what scrolls in its own box (a wide table):
  // no element, no text, and the body is as wide as the screen.
  await page.waitForSelector('form.queue');
  await page.waitForSelector('table.grid.runs');
  const outside = await page.evaluate(() => {
    const clipped = (e) => {
      for (let a = e.parentElement; a && a !== document.body; a = a.parentElement) {
        if (getComputedStyle(a).overflowX !== 'visible') return true;
      }
      return false;
    };
    const past = (r, e) => r.right + parseFloat(getComputedStyle(e).marginRight) > 390;
    const boxes = [...document.querySelectorAll('body *')]
      .filter((e) => past(e.getBoundingClientRect(), e) && !clipped(e))
      .map((e) => `${e.tagName.toLowerCase()}.${e.className} to ${Math.round(e.getBoundingClientRect().right)} px`);
    const texts = [];
    const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let t = walk.nextNode(); t; t = walk.nextNode()) {
      const range = document.createRange();
      range.selectNodeContents(t);
      if (range.getBoundingClientRect().right > 390 && !clipped(t)) texts.push(`text "${t.textContent.slice(0, 60)}"`);
    }
    return boxes.concat(texts);
  });
  assert.deepEqual(outside, [], 'past a 390 px screen');
  assert.ok(await page.evaluate(() => document.body.scrollWidth) <= 390);
  // Each control with what a finger hits (a box's or a choice's label): inside the screen, and
  // at least 24 px high (WCAG 2.2's smallest target).
  const targets = () => page.$$eval('form.queue input, form.queue select, form.queue button', (els) => els
    .filter((e) => e.type !== 'hidden' && e.getClientRects().length > 0)
    .map((e) => {
      const r = (e.closest('label') ?? e).getBoundingClientRect();
      return { name: `${e.name || e.textContent} ${e.value ?? ''}`.trim(), left: r.left, right: r.right, height: r.height };
    }));
  for (const learner of ['frozen-baseline', 'fine-tuning', 'prompt', 'in-context', 'crossfit', 'crossfit-upstream']) {
    await page.selectOption('form.queue select[name="learner"]', learner);
    const off = (await targets()).filter((t) => t.left < 0 || t.right > 390 || t.height < 24);
    assert.deepEqual(off, [], `${learner}: ${JSON.stringify(off)}`);
  }
  // Upstream learning names a partition and the folder it writes, not tasks.
  const shown = await targets();
  assert.ok(shown.some((t) => t.name.startsWith('partition')) && shown.some((t) => t.name.startsWith('out')), JSON.stringify(shown));
  assert.ok(!shown.some((t) => t.name.startsWith('task ')), JSON.stringify(shown));
  // Queued by touch.
  await page.selectOption('form.queue select[name="learner"]', 'frozen-baseline');
  await page.tap('form.queue input[name="task"][value="SST-2"]');
  await page.fill('form.queue input[name="k"]', '10');
  await page.fill('form.queue input[name="split"]', '1');
  await page.tap('form.queue input[name="replace"]');
  await page.tap('form.queue button[type="submit"]');
  await page.waitForFunction(() => /1 job of MiniLM-L6 span head \(baseline\) queued/.test(document.querySelector('form.queue .saved')?.textContent ?? ''));
  assert.deepEqual(sql("SELECT COUNT(*) FROM jobs j JOIN grid_jobs g ON g.id = j.id WHERE j.status = 'queued' AND g.k = 10 AND g.split = 1"), [[1]]);
  assert.deepEqual(page.errors, []);
  await context.close();
});
