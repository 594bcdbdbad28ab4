// Span items of the real CLUES tasks on a phone (390 x 844): on every item a worker meets, the
// first screen holds the question, the passage in its own scroll box, and the answer controls
// (Add, Submit, No answer), asserted per item, 12 SQuAD v2 and 12 ReCoRD items, not on one
// sample. Needs the official CLUES data (CLUES_DATA, default ../shared/data/clues).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { start, newPage, joinStudy, RESULTS } from './server.mjs';

const DATA = process.env.CLUES_DATA || new URL('../../../shared/data/clues', import.meta.url).pathname;
const TASKS = { 'SQuAD-v2': 'SQuAD-v2', ReCoRD: 'ReCoRD' };
const HAVE = Object.keys(TASKS).every((t) => existsSync(join(DATA, t)));
if (!HAVE) {
  if (process.env.CI) throw new Error(`the official CLUES data is not at ${DATA} (set CLUES_DATA)`);
  console.log(`SKIPPED phone_spans.test.mjs: the official CLUES data is not at ${DATA} (set CLUES_DATA)`);
}
const ITEMS = 12;
const SCREEN = { width: 390, height: 844 };

let env;
const studies = {};
before(async () => {
  if (!HAVE) return;
  env = await start((cli) => {
    for (const task of Object.keys(TASKS)) {
      cli('import', 'clues', join(DATA, task));
      const out = cli('study', 'create', '--open', '--task', task, '--name', `Phone ${task}`,
        '--scenarios', '0', '--annotators', '3');
      studies[task] = Number(/created study (\d+)/.exec(out)[1]);
    }
  });
});
after(async () => { await env?.stop(); });

/** Where the element lies on the first screen (the page not scrolled): top and bottom, px. */
const box = (page, selector) => page.$eval(selector, (e) => {
  const r = e.getBoundingClientRect();
  return { top: r.top + scrollY, bottom: r.bottom + scrollY };
});

for (const task of Object.keys(TASKS)) {
  test(`on a phone, each of ${ITEMS} ${task} items shows its question, passage box and answer controls on the first screen`,
    { skip: !HAVE && 'no CLUES data', timeout: 240000 }, async () => {
      const context = await env.browser.newContext({ viewport: SCREEN, hasTouch: true, isMobile: true, deviceScaleFactor: 3 });
      const page = await newPage(env.browser, { context });
      await joinStudy(page, `${env.base}/join/${studies[task]}?PROLIFIC_PID=phone-${task}&STUDY_ID=st&SESSION_ID=se`);
      const seen = [];
      for (let i = 1; i <= ITEMS; i += 1) {
        await page.waitForFunction((n) => document.querySelector('.item h2.progress')?.textContent.includes(`item ${n} of`), i);
        await page.evaluate(() => scrollTo(0, 0));
        const question = (await page.textContent('.item .question')).trim();
        seen.push(question);
        const where = `${task} item ${i} (${question.slice(0, 60)})`;
        if (i === 1) await page.screenshot({ path: `${RESULTS}/phone-${task}-item-1.png` });
        const q = await box(page, '.item .question');
        assert.ok(q.bottom <= SCREEN.height, `${where}: the question ends at ${q.bottom} px`);
        const text = await box(page, '.span-context');
        const add = await box(page, 'button.add-answer');
        // The passage box starts on the first screen, with room to read above the controls.
        assert.ok(text.top + 100 <= add.top, `${where}: the passage box (from ${text.top} px) has under 100 px above Add (${add.top} px)`);
        for (const part of ['button.add-answer', 'button.submit', 'button.no-answer']) {
          const { bottom } = await box(page, part);
          assert.ok(bottom <= SCREEN.height, `${where}: ${part} ends at ${bottom} px, below the first screen`);
        }
        // The passage scrolls in its own box when it is longer than the box.
        const [scrollH, clientH] = await page.$eval('.span-context', (e) => [e.scrollHeight, e.clientHeight]);
        if (scrollH > clientH + 1) {
          assert.equal(await page.$eval('.span-context', (e) => getComputedStyle(e).overflowY), 'auto', where);
        }
        await page.tap('button.no-answer');
      }
      assert.equal(new Set(seen).size, ITEMS, 'twelve different items');
      assert.deepEqual(page.errors, []);
      await context.close();
    });
}
