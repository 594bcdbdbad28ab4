// The crowd protocol in Chromium: a zero-shot span worker (mouse selection on text with emoji,
// ZWJ sequences, skin tones, combining accents and CRLF; keyboard-only selection; the explicit
// "no answer"), and a 10-shot classification worker (Help, confidence, golds revealed and
// locked, a network failure and its retry, resuming after a reload, the completion code).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { start, newPage, openHydrated, joinStudy, signIn, writeSst, selectByMouse, USERS, RESULTS } from './server.mjs';

/** Code point offset of `needle` in `text` (as the server stores offsets). */
const cpOffset = (text, needle) => [...text.slice(0, text.indexOf(needle))].length;
const cpLength = (s) => [...s].length;

const SPAN_TEXTS = [
  'Mount Everest 🏔️ rises 8,849 m.\r\nThe Sherpa guide 👩🏽‍🦰 Pasang Lhamu led the first climb.\r\nCafe\u0301 owners in Namche cheered 🎉.',
  'Zoë 👨‍👩‍👧‍👦 visited\r\nKrako\u0301w 👍🏿 twice.',
  'Nothing to see here 🙂.',
];

/** A small CLUES-shaped data folder of our own, written for this test. */
function writeFixture(dir) {
  const root = join(dir, 'fixture');
  const squad = join(root, 'SQuAD-v2');
  const sst = join(root, 'SST-2');
  mkdirSync(squad, { recursive: true });
  const span = (id, context, question, answers) => JSON.stringify({
    question, id, context, is_impossible: answers.length === 0,
    answer: answers.map((a) => ({ text: a, answer_start: cpOffset(context, a) })),
  });
  writeFileSync(join(squad, 'squad-v2_test.jsonl'), [
    span('e1', SPAN_TEXTS[0], 'Who led the first climb?', ['Pasang Lhamu']),
    span('e2', SPAN_TEXTS[1], 'Which city did Zoë visit?', ['Krako\u0301w']),
    span('e3', SPAN_TEXTS[2], 'What is the capital of Mars?', []),
  ].join('\n') + '\n');
  writeSst(sst, [
    ['a joyous ride from start to finish ', 'positive'],
    ['a slog with no payoff ', 'negative'],
    ['the cast shines 🌟 in every scene ', 'positive'],
  ]);
  return root;
}

let env;
const studies = {};
before(async () => {
  env = await start((cli, dir) => {
    cli('import', 'clues', writeFixture(dir));
    const id = (out) => Number(/created study (\d+)/.exec(out)[1]);
    studies.span = id(cli('study', 'create', '--task', 'SQuAD-v2', '--name', 'Span study', '--scenarios', '0',
      '--annotators', '1', '--code', 'SPAN-OK', '--open'));
    studies.span2 = id(cli('study', 'create', '--task', 'SQuAD-v2', '--name', 'Second span study', '--scenarios', '0',
      '--annotators', '3', '--open'));
    studies.ten = id(cli('study', 'create', '--task', 'SST-2', '--name', 'Ten-shot study', '--scenarios', '10',
      '--annotators', '1', '--code', 'TEN-SHOT', '--open'));
    studies.same = id(cli('study', 'create', '--task', 'SST-2', '--name', 'Same answers study', '--scenarios', '0',
      '--annotators', '1', '--code', 'SAME-OK', '--open'));
  });
});
after(async () => { await env?.stop(); });

/** Stored answers of a study, read from the database. */
function storedAnswers(studyId) {
  return env.sql(`SELECT e.ext_id, i.phase, i.answer_json, i.no_answer, i.skipped, i.confidence, i.submitted_at
    FROM assignment_items i JOIN assignments a ON a.id = i.assignment_id JOIN examples e ON e.id = i.example_id
    WHERE a.study_id = $1 ORDER BY i.position`, studyId)
    .map((r) => ({ id: r[0], phase: r[1], spans: JSON.parse(r[2] ?? 'null'), no_answer: r[3], skipped: r[4], confidence: r[5], submitted: r[6] }));
}

async function arrive(page, studyId, pid) {
  await joinStudy(page, `${env.base}/join/${studyId}?PROLIFIC_PID=${pid}&STUDY_ID=st&SESSION_ID=se`);
  assert.match(page.url(), new RegExp(`/study/${studyId}$`));
}

/** The answers table as [text, offset, length] rows. */
async function answerRows(page) {
  return page.$$eval('table.answers tbody tr', (trs) => trs.map((tr) =>
    ['.answer-text', '.answer-offset', '.answer-length'].map((c) => tr.querySelector(c).textContent)));
}

async function currentPosition(page) {
  return Number(await page.getAttribute('article.item', 'data-position'));
}

async function waitForNextItem(page, previous) {
  await page.waitForFunction((p) => {
    const a = document.querySelector('article.item');
    return !a || Number(a.dataset.position) !== p || a.querySelector('.reveal');
  }, previous);
}

async function contextText(page) {
  const q = await page.textContent('.item .question');
  return SPAN_TEXTS[['Who led', 'Which city', 'What is the capital'].findIndex((s) => q.startsWith(s))];
}

test('a zero-shot worker answers span items by mouse, by keyboard alone, and with "no answer"', async () => {
  const page = await newPage(env.browser);
  await arrive(page, studies.span, 'zero-shot-worker-1');
  assert.match(await page.textContent('.scenario'), /Zero-shot: 3 test items/);
  // "How to answer" names only controls the page has: each quoted name is a button's label.
  await page.waitForSelector('.span-context');
  const how = await page.textContent('#instructions h2 + p.description ~ p');
  const named = [...how.matchAll(/"([^"]+)"/g)].map((m) => m[1]);
  assert.ok(named.length >= 2, how);
  const labels = await page.locator('article.item button').allTextContents();
  for (const name of named) {
    assert.ok(labels.some((l) => l.trim().startsWith(name)), `"${name}" is not a button: ${labels}`);
  }
  assert.doesNotMatch(how, /right-click|context menu/i);
  for (let n = 0; n < 3; n++) {
    await page.waitForSelector('.span-context');
    const text = await contextText(page);
    const pos = await currentPosition(page);
    if (text === SPAN_TEXTS[0]) {
      // Mouse selection across an emoji ZWJ sequence with a skin tone, after a CRLF; added
      // with the button. A second answer with a combining accent, added with the button too.
      await selectByMouse(page, 'Pasang Lhamu');
      assert.equal(await page.textContent('.selected-text'), 'Pasang Lhamu');
      await page.click('button.add-answer');
      await selectByMouse(page, 'Cafe\u0301');
      // The browser's own context menu (Copy) stays: the page neither prevents it nor shows
      // a menu of its own, and nothing is added.
      const prevented = await page.evaluate(() => {
        const ev = new MouseEvent('contextmenu', { bubbles: true, cancelable: true });
        return !document.querySelector('.span-context').dispatchEvent(ev);
      });
      assert.equal(prevented, false);
      await page.click('.span-context', { button: 'right' });
      assert.equal(await page.locator('.context-menu').count(), 0);
      assert.equal(await page.locator('table.answers tbody tr').count(), 1);
      // Ctrl+A in the text selects it all (the browser's), and adds nothing.
      await page.keyboard.press('Control+a');
      assert.equal(await page.locator('table.answers tbody tr').count(), 1);
      await page.evaluate(() => getSelection().removeAllRanges());
      await selectByMouse(page, 'Cafe\u0301');
      await page.click('button.add-answer');
      const rows = await answerRows(page);
      assert.deepEqual(rows, [
        ['Pasang Lhamu', String(cpOffset(text, 'Pasang Lhamu')), '12'],
        ['Cafe\u0301', String(cpOffset(text, 'Cafe\u0301')), String(cpLength('Cafe\u0301'))],
      ].sort((a, b) => Number(a[1]) - Number(b[1])));
      // Delete one and add it back: the table follows.
      await page.click('table.answers tbody tr >> nth=1 >> button.delete');
      assert.equal(await page.locator('table.answers tbody tr').count(), 1);
      // The mouse focused the text: the A key adds the selection.
      await selectByMouse(page, 'Cafe\u0301');
      await page.keyboard.press('a');
      assert.equal(await page.locator('table.answers tbody tr').count(), 2);
      await page.screenshot({ path: `${RESULTS}/span-item.png`, fullPage: true });
      await page.click('button.submit');
    } else if (text === SPAN_TEXTS[1]) {
      // Keyboard only: Tab to the text, move by word, extend with Shift, add with A.
      await page.focus('.find-input');
      await page.keyboard.press('Shift+Tab');
      assert.equal(await page.evaluate(() => document.activeElement.className), 'context span-context');
      await page.keyboard.press('Home');
      for (let i = 0; i < 3; i++) await page.keyboard.press('ArrowRight');
      await page.keyboard.press('Shift+ArrowRight');
      assert.equal(await page.textContent('.selected-text'), 'Krako\u0301w');
      await page.keyboard.press('a');
      assert.deepEqual(await answerRows(page), [['Krako\u0301w', String(cpOffset(text, 'Krako\u0301w')), '7']]);
      // Submit from the keyboard too.
      await page.focus('button.submit');
      await page.keyboard.press('Enter');
    } else {
      // Submitting with no answer is an explicit choice.
      assert.equal(await page.isDisabled('button.submit'), true);
      await page.click('button.no-answer');
    }
    await waitForNextItem(page, pos);
  }
  await page.waitForSelector('.completion-code');
  assert.equal(await page.textContent('.completion-code'), 'SPAN-OK');
  assert.match(await page.textContent('.summary .time'), /Time on items: \d+ min \d\d s/);
  await page.screenshot({ path: `${RESULTS}/span-study-done.png`, fullPage: true });
  assert.deepEqual(page.errors, []);

  // What the server stored: code-point offsets into the text exactly as imported.
  const stored = Object.fromEntries(storedAnswers(studies.span).map((r) => [r.id, r]));
  const spans = (id) => stored[id].spans.map((s) => [s.text, s.offset, s.length]);
  assert.deepEqual(spans('e1'), [
    ['Pasang Lhamu', cpOffset(SPAN_TEXTS[0], 'Pasang Lhamu'), 12],
    ['Cafe\u0301', cpOffset(SPAN_TEXTS[0], 'Cafe\u0301'), 5],
  ].sort((a, b) => a[1] - b[1]));
  assert.deepEqual(spans('e2'), [['Krako\u0301w', cpOffset(SPAN_TEXTS[1], 'Krako\u0301w'), 7]]);
  assert.equal(stored.e3.no_answer, 1);
  assert.deepEqual(stored.e3.spans, []);
  await page.close();
});

test('a 10-shot worker trains with golds revealed and locked, survives a network failure and a reload, and finishes', async () => {
  const page = await newPage(env.browser);
  await arrive(page, studies.ten, 'ten-shot-worker-1');
  assert.match(await page.textContent('.scenario'), /10-shot: 10 training examples/);
  assert.match(await page.textContent('.progress'), /^Training example 1 of 10$/);
  // Help opens the label's definition and an example.
  await page.click('.option >> nth=0 >> details.help summary');
  assert.match(await page.textContent('.option >> nth=0 >> details.help'), /Example:/);
  // The 5-point scale in the paper's words.
  assert.deepEqual((await page.locator('fieldset.confidence label').allTextContents()).map((t) => t.trim()),
    ['Strongly disagree', 'Disagree', 'Undecided', 'Agree', 'Strongly agree']);

  for (let i = 1; i <= 10; i++) {
    await page.waitForSelector(`text=Training example ${i} of 10`);
    const context = await page.textContent('.context');
    const right = context.includes('bright') ? 'positive' : 'negative';
    // The first answer is wrong on purpose: the reveal shows the difference.
    const label = i === 1 ? (right === 'positive' ? 'negative' : 'positive') : right;
    assert.equal(await page.isDisabled('button.submit'), true, 'Submit waits for a label and a confidence');
    await page.check(`input[name="label"][value="${label}"]`);
    await page.check('input[name="confidence"][value="4"]');
    await page.click('button.submit');
    await page.waitForSelector('.reveal');
    assert.equal(await page.textContent('.reveal .correct-answer'), right);
    assert.match(await page.textContent('.reveal .your-answer'), new RegExp(`^${label}`));
    // The reveal says in plain words how the answer fared, and its colour says it too.
    assert.match(await page.textContent('.reveal .result'), i === 1 ? /^Your answer is not the correct one/ : /^Your answer is correct\.$/);
    assert.equal(await page.locator(i === 1 ? '.reveal.wrong' : '.reveal.right').count(), 1);
    if (i === 1) {
      await page.screenshot({ path: `${RESULTS}/training-reveal.png`, fullPage: true });
      // The UI offers no way to change it ...
      assert.equal(await page.locator('input[name="label"]').count(), 0);
      // ... and a direct request is refused.
      const position = await currentPosition(page);
      const res = await page.evaluate(async (position) => {
        const studyId = Number(location.pathname.split('/').pop());
        const r = await fetch('/api/submit_answer', {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json' },
          body: JSON.stringify({ study_id: studyId, position, client_id: 'forged', answer: { kind: 'label', label: 'positive', confidence: 5 } }),
        });
        return { status: r.status, body: await r.text() };
      }, position);
      assert.equal(res.status, 409);
      assert.match(res.body, /locked/);
      // A reload shows the same revealed item.
      await openHydrated(page, page.url());
      await page.waitForSelector('.reveal');
      // The refused request above was expected (the response and its console line).
      page.errors = page.errors.filter((e) => !e.includes('/api/submit_answer') && !e.includes('status of 409'));
      assert.match(await page.textContent('.progress'), /^Training example 1 of 10$/);
    }
    await page.click('button.continue');
  }

  // Test phase: the first submission meets a network failure; Retry saves it once.
  await page.waitForSelector('text=Test item 1 of 3');
  const pos = await currentPosition(page);
  await page.route('**/api/submit_answer', (route) => route.abort());
  await page.check('input[name="label"] >> nth=0');
  await page.check('input[name="confidence"][value="2"]');
  await page.click('button.submit');
  await page.waitForSelector('.retry');
  assert.equal(await currentPosition(page), pos, 'the item stays until the server has it');
  await page.unroute('**/api/submit_answer');
  page.errors = page.errors.filter((e) => !e.includes('ERR_FAILED'));
  await page.click('button.retry-button');
  await waitForNextItem(page, pos);
  await page.waitForSelector('text=Test item 2 of 3');
  // Skip is recorded as a skip.
  await page.click('button.skip');
  await page.waitForSelector('text=Test item 3 of 3');
  await page.check('input[name="label"] >> nth=1');
  await page.check('input[name="confidence"][value="5"]');
  await page.click('button.submit');
  await page.waitForSelector('.completion-code');
  assert.equal(await page.textContent('.completion-code'), 'TEN-SHOT');
  // The way back to Prolific carries the code.
  assert.equal(await page.getAttribute('a.return-link', 'href'), 'https://app.prolific.com/submissions/complete?cc=TEN-SHOT');
  assert.match(await page.textContent('.done'), /Training: 10 examples, average score 0\.90/);
  assert.match(await page.textContent('.done'), /Test: 3 items, 1 skipped/);
  await page.screenshot({ path: `${RESULTS}/ten-shot-done.png`, fullPage: true });
  assert.deepEqual(page.errors, []);

  const stored = storedAnswers(studies.ten);
  assert.equal(stored.length, 13);
  assert.ok(stored.every((r) => r.submitted !== null));
  assert.deepEqual(stored.slice(0, 10).map((r) => r.phase), Array(10).fill('training'));
  assert.deepEqual(stored.slice(10).map((r) => [r.skipped, r.confidence]), [[0, 2], [1, null], [0, 5]]);

  // Coming back later shows the code again; the place is kept.
  await joinStudy(page, `${env.base}/join/${studies.ten}?PROLIFIC_PID=ten-shot-worker-1`);
  assert.equal(await page.textContent('.completion-code'), 'TEN-SHOT');
  await page.close();
});

test('the same label and confidence on several items in a row, by mouse and by keyboard', async () => {
  const page = await newPage(env.browser);
  await arrive(page, studies.same, 'same-answer-worker');
  const fresh = async (i) => {
    await page.waitForSelector(`text=Test item ${i} of 3`);
    // Every item starts with an empty form that looks empty.
    assert.equal(await page.locator('input[name="label"]:checked').count(), 0, `item ${i}: no label shown as chosen`);
    assert.equal(await page.locator('input[name="confidence"]:checked').count(), 0, `item ${i}: no confidence shown as chosen`);
    assert.equal(await page.isDisabled('button.submit'), true);
  };
  for (const i of [1, 2]) {
    await fresh(i);
    await page.click('input[name="label"][value="positive"]');
    await page.click('input[name="confidence"][value="4"]');
    assert.equal(await page.isDisabled('button.submit'), false, `item ${i}: the clicks count`);
    await page.click('button.submit');
  }
  await fresh(3);
  await page.focus('input[name="label"][value="positive"]');
  await page.keyboard.press('Space');
  await page.focus('input[name="confidence"][value="4"]');
  await page.keyboard.press('Space');
  assert.equal(await page.isDisabled('button.submit'), false, 'the keys count');
  await page.focus('button.submit');
  await page.keyboard.press('Enter');
  await page.waitForSelector('.completion-code');
  const stored = storedAnswers(studies.same);
  assert.deepEqual(stored.map((r) => [r.spans[0].text, r.confidence]), Array(3).fill(['positive', 4]));
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('a worker of one scenario cannot take another, and a full study says so', async () => {
  const page = await newPage(env.browser);
  // The span worker already took part in a scenario of SQuAD-v2: the study link says so.
  await page.goto(`${env.base}/join/${studies.span2}?PROLIFIC_PID=zero-shot-worker-1&STUDY_ID=st&SESSION_ID=se`);
  await page.click('form.start button');
  await page.waitForSelector('[role="alert"]');
  assert.match(await page.textContent('[role="alert"]'), /already took part in the 0-shot scenario of this task/);
  // The ten-shot study has its one annotator: a new worker is told so by the study link, and
  // no account is made for them.
  await page.goto(`${env.base}/join/${studies.ten}?PROLIFIC_PID=late-worker&STUDY_ID=st&SESSION_ID=se`);
  await page.click('form.start button');
  await page.waitForSelector('[role="alert"]');
  assert.match(await page.textContent('[role="alert"]'), /All places in this study are taken/);
  assert.deepEqual(env.sql("SELECT COUNT(*) FROM users WHERE name = 'prolific:late-worker'"), [[0]]);
  // The refusals are answered with 409: the response and, at times, its console line.
  page.errors = page.errors.filter((e) => !e.includes('HTTP 409') && !e.includes('status of 409'));
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('an admin creates a study in the browser; once a worker started, its scenarios are frozen', async () => {
  const page = await newPage(env.browser);
  await signIn(page, env.base, USERS.admin);
  await page.click('a[href="/studies"]');
  await page.waitForSelector('form.config');
  await page.waitForSelector('select[name="task"] option[value="SST-2"]', { state: 'attached' });
  await page.selectOption('select[name="task"]', 'SST-2');
  await page.fill('input[name="name"]', 'Browser-made study');
  await page.fill('input[name="scenarios"]', '0, 10');
  await page.fill('input[name="annotators"]', '2');
  await page.fill('input[name="code"]', 'ADMIN-CODE');
  await page.check('input[name="open"]');
  await page.click('form.config button[type="submit"]');
  await page.waitForSelector('.create-study .saved a');
  await page.click('.create-study .saved a');
  await page.waitForSelector('.worker-link');
  const link = await page.textContent('.worker-link');
  const id = Number(link.split('/').pop());
  // The links are whole, with this site's host, ready to paste into a crowd platform.
  assert.equal(link, `${env.base}/join/${id}`);
  assert.ok((await page.textContent('.prolific-link')).startsWith(`${env.base}/join/${id}?PROLIFIC_PID=`));
  assert.match(await page.textContent('.meta'), /not started/);

  const worker = await newPage(env.browser);
  await arrive(worker, id, 'admin-test-worker');
  await worker.waitForSelector('article.item');
  await worker.close();

  await openHydrated(page, `${env.base}/studies/${id}`);
  assert.match(await page.textContent('.meta'), /started/);
  assert.equal(await page.locator('table.workers tbody tr').count(), 1);
  // The frozen fields are shown read-only, with the reason.
  assert.equal(await page.getAttribute('.edit-study input[name="scenarios"]', 'readonly'), '');
  assert.equal(await page.isDisabled('.edit-study select[name="shot_group"]'), true);
  assert.match(await page.textContent('.edit-study .frozen-note'), /scenarios and training sets are fixed/);
  // Pay may still change.
  await page.fill('.edit-study input[name="rate"]', '15.00');
  await page.click('.edit-study button[type="submit"]');
  await page.waitForSelector('.edit-study .saved');
  assert.equal(await page.inputValue('.edit-study input[name="rate"]'), '15.00');
  assert.deepEqual(page.errors, []);
  await page.close();
});
