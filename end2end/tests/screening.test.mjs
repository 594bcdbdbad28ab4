// Screening items and the training order in the browser (issue 26): a worker answers the
// study's screening items first, by keyboard, with no answer shown; a training order of their
// own is recorded; the dashboard shows each group's screening S1 and the training-order table.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { start, newPage, joinStudy, signIn, openHydrated, writeSst, answerLabelByKeys, USERS } from './server.mjs';

let env;
let study;
before(async () => {
  env = await start((cli, dir) => {
    const root = join(dir, 'fixture');
    writeSst(join(root, 'SST-2'), [
      ['a joyous ride from start to finish ', 'positive'],
      ['a slog with no payoff ', 'negative'],
    ]);
    // A second 10-shot file, sharing nothing with the first: the screening items.
    const review = (id, text, label) => JSON.stringify({ answer: [label], question: 'positive or negative?', id, context: text });
    const screening = Array.from({ length: 10 }, (_, i) =>
      review(i + 1, `${i % 2 ? 'an empty, joyless' : 'a warm, generous'} picture, take ${i + 1} `, i % 2 ? 'negative' : 'positive'));
    writeFileSync(join(root, 'SST-2', 'sst_train_10_2.jsonl'), screening.join('\n') + '\n');
    cli('import', 'clues', root);
    const out = cli('study', 'create', '--open', '--task', 'SST-2', '--name', 'Screened study', '--scenarios', '10',
      '--annotators', '2', '--code', 'SCREEN-OK', '--screening', '10_2', '--shuffle-training');
    study = Number(/created study (\d+)/.exec(out)[1]);
  });
});
after(async () => { await env?.stop(); });

/** Answers the current label item with `label` by keyboard. */
async function answer(page, label, heading) {
  await page.waitForSelector(`h2.progress:text("${heading}")`);
  await answerLabelByKeys(page, label);
}

test('screening items first without feedback, then training in an order of ones own, then the test', async () => {
  const page = await newPage(env.browser);
  await joinStudy(page, `${env.base}/join/${study}?PROLIFIC_PID=screened-1&STUDY_ID=st&SESSION_ID=se`);
  assert.match(await page.textContent('main'), /First 10 screening items \(no answers shown\)\. 10-shot/);
  for (let i = 1; i <= 10; i += 1) {
    await answer(page, 'positive', `Screening item ${i} of 10`);
    // No gold, no Continue: the next item comes at once.
    await page.waitForFunction((h) => document.querySelector('.step-heading')?.textContent !== h, `Screening item ${i} of 10`);
    assert.equal(await page.locator('.reveal').count(), 0);
  }
  // Training: each answer's gold is shown, Continue goes on.
  for (let i = 1; i <= 10; i += 1) {
    await answer(page, 'positive', `Training example ${i} of 10`);
    await page.waitForSelector('.reveal');
    await page.focus('button.continue');
    await page.keyboard.press('Enter');
    await page.waitForFunction((h) => document.querySelector('.step-heading')?.textContent !== h, `Training example ${i} of 10`);
  }
  await answer(page, 'positive', 'Test item 1 of 2');
  await answer(page, 'negative', 'Test item 2 of 2');
  await page.waitForSelector('.completion-code');
  assert.equal(await page.textContent('.completion-code'), 'SCREEN-OK');
  assert.deepEqual(page.errors, []);
  // Stored: 10 screening rows first, then the training rows in this place's own order.
  const phases = env.sql("SELECT phase, COUNT(*), MIN(position), MAX(position) FROM assignment_items GROUP BY phase ORDER BY MIN(position)");
  assert.deepEqual(phases, [['screening', 10, 0, 9], ['training', 10, 10, 19], ['test', 2, 20, 21]]);
  // Half the screening items are positive: S1 0.5, shown beside Table 5.
  const researcher = await newPage(env.browser);
  await signIn(researcher, env.base, USERS.researcher);
  await openHydrated(researcher, `${env.base}/dashboard`);
  const row = await researcher.locator('#screening-all tbody tr').first().evaluate((r) => [...r.cells].map((c) => c.textContent).join('\t'));
  assert.match(row, /^10\t50\.0 ± 0\.0 \(n=1\)$/);
  assert.match(await researcher.locator('#training-order-all tbody tr').first().evaluate((r) => [...r.cells].map((c) => c.textContent).join('\t')), /^SST-2\t10\trandom per worker\t/);
  assert.deepEqual(researcher.errors, []);
});
