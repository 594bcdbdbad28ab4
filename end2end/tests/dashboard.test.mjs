// The researcher dashboard in Chromium: three crowd workers finish a small SST-2 study through
// the HTTP API; a researcher sees the Table 5 layout and the learning curve, downloads the
// annotations CSV; a worker is refused.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { start, newPage, openHydrated, joinStudy, signIn, staffPageRefused, writeSst, importColours, USERS, RESULTS } from './server.mjs';

/** A CLUES-shaped SST-2 folder of our own: 10 training items, 4 test items. */
function writeFixture(dir) {
  writeSst(join(dir, 'fixture', 'SST-2'), [
    ['a joyous ride from start to finish ', 'positive'],
    ['a slog with no payoff ', 'negative'],
    ['the cast shines in every scene ', 'positive'],
    ['flat, long and loud ', 'negative'],
  ]);
  return join(dir, 'fixture');
}

let env;
let study;
let textStudy;
before(async () => {
  env = await start((cli, dir) => {
    cli('import', 'clues', writeFixture(dir));
    study = Number(/created study (\d+)/.exec(cli('study', 'create', '--task', 'SST-2', '--name', 'Dashboard study',
      '--scenarios', '0,10', '--annotators', '2', '--code', 'DASH-1', '--open'))[1]);
    // A text-to-text task of our own, sampled for the five seeds, made into a study task.
    importColours(cli, dir, [['What colour is a lemon?', 'yellow'], ['What colour is milk?', 'white', 'cream']]);
    textStudy = Number(/created study (\d+)/.exec(cli('study', 'create', '--task', 'xf-colours-s100', '--name', 'Colours',
      '--scenarios', '0', '--annotators', '1', '--open'))[1]);
  });
});
after(async () => { await env?.stop(); });

/** A crowd worker who answers every item with `pick(text)`, through the server functions. */
async function crowdWorker(pid, pick) {
  // The Start button as the start page's script sends it (without `script=1` no place is taken).
  const join = await fetch(`${env.base}/join/${study}?PROLIFIC_PID=${pid}&STUDY_ID=s&SESSION_ID=x${pid}`, {
    method: 'POST', redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'script=1',
  });
  assert.equal(join.status, 303);
  const cookie = join.headers.getSetCookie()[0].split(';')[0];
  const call = async (name, body, json) => {
    const r = await fetch(`${env.base}/api/${name}`, {
      method: 'POST',
      headers: { cookie, accept: 'application/json', 'content-type': json ? 'application/json' : 'application/x-www-form-urlencoded' },
      body: json ? JSON.stringify(body) : new URLSearchParams(body).toString(),
    });
    assert.equal(r.status, 200, `${name}: ${await r.clone().text()}`);
    return r.json();
  };
  for (let n = 0; n < 100; n++) {
    const state = await call('study_state', { study_id: study });
    if (state.step.Done) return state.step.Done;
    const item = state.step.Item;
    if (item.reveal) {
      await call('continue_study', { study_id: study, position: item.position });
      continue;
    }
    const label = pick(item.context.text);
    await call('submit_answer', {
      study_id: study, position: item.position, client_id: `${pid}-${n}`,
      answer: { kind: 'label', label, confidence: 4 },
    }, true);
    if (item.phase === 'training') await call('continue_study', { study_id: study, position: item.position });
  }
  throw new Error('the study did not end');
}

test('researcher sees tables and the learning curve and downloads an export; a worker is refused', async () => {
  const good = (t) => (/slog|flat|dull/.test(t) ? 'negative' : 'positive');
  // Arrivals alternate between the scenarios (fewest filled first): 0, 10, 0, 10.
  // Zero-shot: one right on all 4, one always "positive" (2 of 4); 10-shot: both right.
  await crowdWorker('zero-a', good);
  await crowdWorker('ten-a', good);
  await crowdWorker('zero-b', () => 'positive');
  await crowdWorker('ten-b', good);

  const page = await newPage(env.browser);
  await signIn(page, env.base, USERS.researcher);
  await page.waitForSelector('text=Researcher dashboard');
  await openHydrated(page, `${env.base}/dashboard`);
  // The dashboard is sent whole (the report in the HTML, no "Loading" line for script to
  // replace), and its bundle is not preloaded: it is asked for after the first paint.
  const html = await (await page.request.get(`${env.base}/dashboard`)).text();
  assert.match(html, /id="table5-all-official"/);
  assert.doesNotMatch(html, /Loading the report/);
  assert.doesNotMatch(html, /rel="(module)?preload"/);
  const order = await page.evaluate(() => ({
    paint: performance.getEntriesByName('first-contentful-paint')[0].startTime,
    wasm: performance.getEntriesByType('resource').find((e) => e.name.endsWith('.wasm')).startTime,
  }));
  assert.ok(order.wasm > order.paint, `the bundle was asked for at ${order.wasm} ms, before the first paint at ${order.paint} ms`);
  const table = page.locator('#table5-all-official');
  await table.waitFor();
  assert.deepEqual((await table.locator('thead tr.groups > *').allTextContents()).map((s) => s.trim()), ['', 'Sentence classification']);
  assert.deepEqual(await table.locator('thead tr:not(.groups) th').allTextContents(), ['Shots', 'SST-2']);
  // Zero-shot: S1 1.0 and 0.5 -> 75.0 ± 25.0; 10-shot: 100.0 ± 0.0.
  assert.deepEqual(await table.locator('tbody tr').evaluateAll((rows) => rows.map((r) => [...r.cells].map((c) => c.textContent))),
    [['0', '75.0 ± 25.0 (n=2)'], ['10', '100.0 ± 0.0 (n=2)']]);
  // The rules are stated beside the tables; every cell has its skip rate.
  assert.match(await page.textContent('.dash-rules'), /A skipped item is not an answer: it scores 0/);
  assert.match(await page.textContent('.dash-rules'), /exactly at the margin .* is kept/);
  assert.deepEqual(await page.locator('#skips-all tbody tr').evaluateAll((rows) => rows.map((r) => r.cells[0].textContent)), ['0', '10']);
  const chart = page.locator('figure.chart[data-task="SST-2"] svg');
  await chart.waitFor();
  assert.equal(await chart.locator('polyline.mean:not([stroke-dasharray])').count(), 1);
  // Beside the humans, dashed: the reference answer of the 10 shots' majority label.
  assert.equal(await chart.locator('g.series[data-name="Reference: majority label of the k shots"] polyline.mean[stroke-dasharray]').count(), 1);
  assert.equal(await chart.locator('polygon.band').count(), 1);
  assert.match(await chart.locator('circle title').first().textContent(), /k=0: 75\.0 ± 25\.0 \(n=2\)/);
  // Each point's 95% interval as an error bar. The study's plan was frozen when the first worker
  // arrived: 10-shot against zero-shot is its one (and primary) comparison. Annotator S1 1, 0.5
  // against 1, 1: +25.0; relabelling the four annotators, all 6 splits differ by 0.25 or more
  // (p 1.000), and 2 against 2 cannot go below 2 / 6. These annotators on more items: item S1
  // 1, 0.5, 1, 0.5 against 1, 1, 1, 1, of the 4 sign patterns of the two differences one
  // reaches +0.25: p = 2 / 4.
  assert.equal(await chart.locator('path.error-bar').count(), 2);
  const compared = await page.locator('#comparisons-all tbody tr').evaluateAll((rows) => rows.map((r) => [...r.cells].map((c) => c.textContent)));
  assert.deepEqual(compared[0].slice(0, 7), [String(study), 'SST-2', 'k=10 vs k=0', 'primary', '2 vs 2', '4', '+25.0']);
  assert.match(compared[0][12], /^1\.000 \(smallest possible 0\.333/);
  assert.match(compared[0][15], /p 0\.500$/);
  assert.match(await page.textContent('.dash-rules'), /Satterthwaite/);
  assert.match(await page.locator('#intervals-all tbody tr').first().evaluate((r) => [...r.cells].map((c) => c.textContent).join('\t')), /^0\tHuman\t75\.0 \(other annotators /);
  const plans = await page.locator('#analysis-plans tbody tr').evaluateAll((rows) => rows.map((r) => [...r.cells].map((c) => c.textContent)));
  const plan = plans.find((row) => row[0] === String(study));
  assert.match(plan[2], /^frozen at \d+ \(unix ms\), SHA-256 [0-9a-f]{64}$/);
  assert.equal(plan[3], 'k=10 vs k=0');
  await page.screenshot({ path: join(RESULTS, 'dashboard.png'), fullPage: true });

  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.click('a:has-text("Annotations (CSV)")'),
  ]);
  const saved = join(RESULTS, 'annotations.csv');
  await download.saveAs(saved);
  const csv = readFileSync(saved, 'utf8').trim().split('\n');
  assert.match(csv[0], /^study_id,study,config_id,task,assignment_id,worker,/);
  // 4 workers: 2 x 4 test items + 2 x (10 training + 4 test).
  assert.equal(csv.length - 1, 36);
  assert.deepEqual(page.errors, []);

  const worker = await newPage(env.browser);
  await signIn(worker, env.base, USERS.worker);
  await worker.waitForSelector('text=Sign out');
  await staffPageRefused(worker, `${env.base}/dashboard`);
  assert.equal(await worker.locator('#table5-all-official').count(), 0);
  const refused = await worker.evaluate(async () => (await fetch('/export/scores.csv')).status);
  assert.equal(refused, 403);
});

test('CrossFit page: the demo partition\'s ARG, an edited metric, a created partition; workers refused', async () => {
  const page = await newPage(env.browser);
  await signIn(page, env.base, USERS.researcher);
  await page.waitForSelector('text=CrossFit tasks');
  await openHydrated(page, `${env.base}/crossfit`);
  await page.waitForSelector('.xf-tasks tbody tr');
  // The six demo tasks and the one this test imported.
  assert.equal(await page.locator('.xf-tasks tbody tr').count(), 7);
  // ARG of the nearest-input method over majority-output on the demo partition, 5 seeds.
  await page.waitForSelector('.arg-overall');
  assert.match(await page.locator('.arg-overall').textContent(),
    /ARG of nearest-input over majority-output on demo: [+-]\d+\.\d\d% ± \d+\.\d\d% \(population std\) over 5 seeds/);
  assert.equal(await page.locator('.arg-table tr.arg-seed').count(), 5);

  // The headline task is scored with Rouge-L; switch it to EM: its scores change.
  const row = page.locator('.xf-scores tbody tr', { hasText: 'demo-xf-headline' }).first();
  assert.equal(await row.locator('td').nth(2).textContent(), 'Rouge-L');
  const task = page.locator('.xf-tasks tr[data-task="demo-xf-headline"]');
  await task.locator('select[name="metric"]').selectOption('EM');
  await task.locator('button').click();
  await page.waitForSelector('.xf-tasks p.saved');
  await page.waitForFunction(() => [...document.querySelectorAll('.xf-scores tbody tr')]
    .some((r) => r.innerText.includes('demo-xf-headline') && r.innerText.includes('EM')));

  // Create a partition in the form; it is listed and its JSON downloads.
  await page.fill('input[name="partition-name"]', 'two-tasks');
  await page.fill('input[name="train"]', 'demo-xf-topic');
  await page.fill('input[name="test"]', 'demo-xf-sentiment, demo-xf-capitals');
  await page.click('form.create-partition button');
  await page.waitForSelector('article.partition[data-name="two-tasks"]');
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.click('article.partition[data-name="two-tasks"] a'),
  ]);
  const saved = join(RESULTS, 'partition.json');
  await download.saveAs(saved);
  assert.deepEqual(JSON.parse(readFileSync(saved, 'utf8')),
    { train: ['demo-xf-topic'], dev: [], test: ['demo-xf-sentiment', 'demo-xf-capitals'] });
  // A task listed twice is refused with the reason.
  await page.fill('input[name="partition-name"]', 'bad');
  await page.fill('textarea[name="json"]', '{"train": ["a"], "dev": [], "test": ["a"]}');
  await page.click('form.import-partition button');
  await page.waitForSelector('.partition-forms p.error');
  assert.match(await page.locator('.partition-forms p.error').textContent(), /listed twice/);
  await page.screenshot({ path: join(RESULTS, 'crossfit.png'), fullPage: true });
  assert.deepEqual(page.errors.filter((e) => !/HTTP 400/.test(e) && !/status of 400/.test(e)), []);

  const worker = await newPage(env.browser);
  await signIn(worker, env.base, USERS.worker);
  await worker.waitForSelector('text=Sign out');
  await staffPageRefused(worker, `${env.base}/crossfit`);
});

test('a text-to-text study: the worker writes free-text answers, scored with the task\'s metric', async () => {
  const page = await newPage(env.browser);
  await joinStudy(page, `${env.base}/join/${textStudy}?PROLIFIC_PID=free-text-1&STUDY_ID=s&SESSION_ID=t`);
  for (let i = 0; i < 2; i++) {
    const box = page.locator('textarea[name="answer"]');
    await box.waitFor();
    assert.equal(await page.locator('button.submit').isDisabled(), true, 'Submit needs text');
    const text = await page.locator('.context').textContent();
    await box.fill(text.includes('lemon') ? '  Yellow.  ' : 'cream');
    await page.click('button.submit');
    await page.waitForFunction((t) => !document.querySelector('.context') || !document.querySelector('.context').textContent.includes(t), text);
  }
  await page.waitForSelector('text=/completion code/i');
  assert.deepEqual(page.errors, []);
  // Stored trimmed, scored with EM (SQuAD normalisation: "Yellow." = "yellow"; "cream" is a gold).
  const rows = env.sql(`SELECT i.answer_json, i.s1 FROM assignment_items i JOIN assignments a ON a.id = i.assignment_id
    WHERE a.study_id = $1 ORDER BY i.position`, textStudy);
  const texts = rows.map(([a]) => JSON.parse(a)[0].text).sort();
  assert.deepEqual(texts, ['Yellow.', 'cream']);
  assert.deepEqual(rows.map(([, s1]) => s1), [1, 1]);

  // An admin makes a study task from a demo task on the CrossFit page.
  const admin = await newPage(env.browser);
  await signIn(admin, env.base, USERS.admin);
  await admin.waitForSelector('text=CrossFit tasks');
  await openHydrated(admin, `${env.base}/crossfit`);
  await admin.selectOption('select[name="xf-task"]', 'demo-xf-sentiment');
  await admin.click('form.study-task button');
  await admin.waitForSelector('.xf-human p.saved');
  assert.equal(await admin.locator('.xf-human p.saved').textContent(), 'Created the task xf-demo-xf-sentiment-s100.');
});
