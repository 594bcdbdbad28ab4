// A SQuAD v2 study on a nesting chain, in Chromium, on the official CLUES files (whose training
// sets nest across split numbers: 10_1 ⊂ 20_5 ⊂ 30_5). The admin's form offers the task's
// chains and refuses the same split for every k; the study page, the list and the export name
// the files; the 20-shot worker trains on 20_5, which holds every 10_1 item.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { start, newPage, openHydrated, joinStudy, signIn, USERS } from './server.mjs';

const DATA = process.env.CLUES_DATA || new URL('../../../shared/data/clues', import.meta.url).pathname;
const SQUAD = join(DATA, 'SQuAD-v2');
const HAVE = existsSync(SQUAD);
if (!HAVE) {
  if (process.env.CI) throw new Error(`the official CLUES data is not at ${DATA} (set CLUES_DATA)`);
  console.log(`SKIPPED shotgroups.test.mjs: the official CLUES data is not at ${DATA} (set CLUES_DATA)`);
}

const rows = (name) => readFileSync(join(SQUAD, name), 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));

let env;
before(async () => {
  if (HAVE) env = await start((cli) => { cli('import', 'clues', SQUAD); });
});
after(async () => { await env?.stop(); });

test('an admin builds a SQuAD v2 study on a nesting chain; its workers train on nested sets', { skip: !HAVE && 'no CLUES data' }, async () => {
  // The files themselves: every 10_1 row is in 20_5, not every one in 20_1.
  const key = (r) => `${r.context}\u0000${r.question}`;
  const ten = rows('squad-v2_train_10_1.jsonl').map(key);
  const twenty5 = new Set(rows('squad-v2_train_20_5.jsonl').map(key));
  const twenty1 = new Set(rows('squad-v2_train_20_1.jsonl').map(key));
  assert.ok(ten.every((k) => twenty5.has(k)));
  assert.ok(!ten.every((k) => twenty1.has(k)));

  const page = await newPage(env.browser);
  await signIn(page, env.base, USERS.admin);
  await page.click('a[href="/studies"]');
  await page.waitForSelector('form.config');
  await page.waitForSelector('select[name="task"] option[value="SQuAD-v2"]', { state: 'attached' });
  await page.selectOption('select[name="task"]', 'SQuAD-v2');
  // The task's chains are offered, the first one chosen.
  const chain = 'select[name="shot_group"] option[value="10_1,20_5,30_5"]';
  await page.waitForSelector(chain, { state: 'attached' });
  assert.equal(await page.inputValue('select[name="shot_group"]'), '10_1,20_5,30_5');
  assert.equal((await page.textContent(chain)).trim(), '10_1 ⊂ 20_5 ⊂ 30_5 (nested)');
  assert.match(await page.textContent('select[name="shot_group"] option[value="10_1,20_1,30_1"]'), /not nested/);
  await page.fill('input[name="name"]', 'Nested SQuAD');
  await page.fill('input[name="scenarios"]', '10, 20');
  await page.fill('input[name="annotators"]', '1');
  await page.check('input[name="open"]');
  // The same split number for every k is refused.
  await page.selectOption('select[name="shot_group"]', '10_1,20_1,30_1');
  await page.click('form.config button[type="submit"]');
  await page.waitForSelector('.create-study [role="alert"]');
  assert.match(await page.textContent('.create-study [role="alert"]'),
    /the 10-shot training set \(10_1\) is not within the 20-shot set \(20_1\)/);
  page.errors = page.errors.filter((e) => !e.includes('create_study') && !e.includes('status of 400'));
  await page.selectOption('select[name="shot_group"]', '10_1,20_5,30_5');
  await page.click('form.config button[type="submit"]');
  await page.waitForSelector('.create-study .saved a');
  await page.click('.create-study .saved a');
  await page.waitForSelector('p.shot-group');
  assert.match(await page.textContent('p.shot-group'), /Training sets: 10_1 ⊂ 20_5$/);
  const id = Number((await page.textContent('.worker-link')).split('/').pop());

  // Arrivals fill 10 then 20 shots; the 20-shot worker sees 20_5's rows in file order.
  const worker = async (pid) => {
    const w = await newPage(env.browser);
    await joinStudy(w, `${env.base}/join/${id}?PROLIFIC_PID=${pid}&STUDY_ID=st&SESSION_ID=se`);
    await w.waitForSelector('article.item');
    return w;
  };
  const w10 = await worker('nest-10');
  assert.match(await w10.textContent('.scenario'), /10-shot/);
  assert.equal((await w10.textContent('.question')).trim(), rows('squad-v2_train_10_1.jsonl')[0].question.trim());
  const w20 = await worker('nest-20');
  assert.match(await w20.textContent('.scenario'), /20-shot/);
  assert.equal((await w20.textContent('.question')).trim(), rows('squad-v2_train_20_5.jsonl')[0].question.trim());
  assert.deepEqual(w10.errors, []);
  assert.deepEqual(w20.errors, []);

  // The list and the researcher's export name the files.
  await openHydrated(page, `${env.base}/studies`);
  assert.match(await page.textContent('table.studies td.shot-group'), /10_1 ⊂ 20_5/);
  const csv = await page.evaluate(async (id) => (await fetch(`/export/annotations.csv?studies=${id}`)).text(), id);
  const [header, first] = csv.split('\n');
  assert.ok(header.split(',').includes('shot_group'), header);
  assert.ok(first.includes(',"10_1,20_5",'), first);
  assert.deepEqual(page.errors, []);
});
