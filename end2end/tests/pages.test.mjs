// A study's own pages in the browser (issue 30): consent read and accepted on a phone by
// keyboard, the questionnaire before (radio buttons, a number, check boxes; Enter submits),
// an attention check among the test items, the questionnaire after, the debriefing before the
// hand-back (which then waits for the worker); declining frees the place and goes back to
// Prolific with the no-consent code; axe-core on the new pages.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { start, newPage, joinStudy, signIn, writeSst, answerLabelByKeys, USERS, RESULTS } from './server.mjs';

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

function writePages(dir) {
  const pages = join(dir, 'pages');
  mkdirSync(pages, { recursive: true });
  writeFileSync(join(pages, 'consent.md'), '# Taking part\n\nYou will label **three** reviews. You may stop at any time.\n');
  writeFileSync(join(pages, 'questionnaire.json'), JSON.stringify({
    before: [
      { id: 'english', text: 'Is English your first language?', kind: 'single_choice', options: ['yes', 'no'], required: true },
      { id: 'age', text: 'How old are you?', kind: 'number', min: 18, max: 120, integer: true },
      { id: 'tasks', text: 'Labelled text before?', kind: 'multiple_choice', options: ['sentiment', 'entities'] },
    ],
    after: [
      { id: 'difficulty', text: 'How hard was it?', kind: 'likert', points: 5, low: 'easy', high: 'hard', required: true },
      { id: 'feedback', text: 'Anything to tell us?', kind: 'short_text' },
    ],
  }));
  writeFileSync(join(pages, 'attention.json'), JSON.stringify([
    { after: 1, text: 'This item checks attention: please choose positive.', question: 'positive or negative?', answer: ['positive'] },
  ]));
  writeFileSync(join(pages, 'debriefing.md'), 'The study compares people with **models**; one item checked attention.\n');
  return pages;
}

let env;
let study;
before(async () => {
  env = await start((cli, dir) => {
    const root = join(dir, 'fixture');
    writeSst(join(root, 'SST-2'), [
      ['a joyous ride from start to finish ', 'positive'],
      ['a slog with no payoff ', 'negative'],
      ['the cast shines in every scene ', 'positive'],
    ]);
    cli('import', 'clues', root);
    const out = cli('study', 'create', '--open', '--task', 'SST-2', '--name', 'Pages study', '--scenarios', '0',
      '--annotators', '5', '--code', 'PAGES-OK', '--pages', writePages(dir),
      '--contact', 'Dr. Ada, ada@uni.example', '--no-consent-code', 'NOCONSENT', '--attention-max-failures', '0');
    study = Number(/created study (\d+)/.exec(out)[1]);
  });
});
after(async () => { await env?.stop(); });

const link = (pid) => `${env.base}/join/${study}?PROLIFIC_PID=${pid}&STUDY_ID=st&SESSION_ID=se`;

/** Answers the current label item with `label` by keyboard, and waits for the next step. */
async function answer(page, label, heading) {
  await page.waitForSelector(`h2.progress:text("${heading}")`);
  await answerLabelByKeys(page, label);
  await page.waitForFunction((h) => document.querySelector('.step-heading')?.textContent !== h, heading);
}

test('on a phone, by keyboard: consent, questions, a check among the items, questions, debriefing', async () => {
  const context = await env.browser.newContext({ viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true });
  await context.route('https://app.prolific.com/**', (route) =>
    route.fulfill({ status: 200, contentType: 'text/html', body: '<p id="prolific">back</p>' }));
  const page = await newPage(env.browser, { context });
  await joinStudy(page, link('pages-phone'));
  await page.waitForSelector('.consent .consent-text h1:text("Taking part")');
  assert.match(await page.textContent('.consent .contact'), /ada@uni\.example/);
  assert.equal(await page.textContent('.consent-text strong'), 'three');
  // Nothing is stored before consent.
  assert.deepEqual(env.sql('SELECT consent_hash FROM assignments'), [[null]]);
  // The two choices are apart and unlike each other; each is final, so each asks first.
  const buttons = await page.$$eval('.consent .buttons button', (bs) => bs.map((b) => {
    const r = b.getBoundingClientRect();
    return { left: r.left, right: r.right, top: r.top, bottom: r.bottom, bg: getComputedStyle(b).backgroundColor };
  }));
  assert.equal(buttons.length, 2);
  const [a, d] = buttons;
  const apart = Math.max(d.left - a.right, d.top - a.bottom);
  assert.ok(apart >= 16, `the consent buttons are ${apart} px apart`);
  assert.notEqual(a.bg, d.bg);
  await page.click('button.decline');
  await page.waitForSelector('.confirm-choice button.confirm:text("Yes, I do not agree")');
  assert.match(await page.textContent('.confirm-choice'), /nothing of your work is kept\. This choice is final/);
  assert.equal(await page.evaluate(() => document.activeElement.classList.contains('confirm')), true);
  await page.click('button.back');
  await page.waitForSelector('button.accept');
  assert.deepEqual(env.sql('SELECT COUNT(*) FROM consent_refusals'), [[0]]);
  assert.deepEqual(env.sql('SELECT consent_hash FROM assignments'), [[null]]);
  // By keyboard: agree, then confirm.
  await page.focus('button.accept');
  await page.keyboard.press('Enter');
  await page.waitForSelector('.confirm-choice button.confirm:text("Yes, I agree")');
  await page.keyboard.press('Enter');
  await page.waitForSelector('form.questionnaire[data-stage="before"]');
  assert.equal(await page.evaluate(() => document.activeElement.classList.contains('step-heading')), true, 'focus follows the step');
  // Submitting without the required answer: the browser asks for it, nothing is sent.
  await page.focus('input[name="q-age"]');
  await page.keyboard.type('34');
  await page.keyboard.press('Enter');
  assert.equal(await page.isVisible('form.questionnaire'), true);
  await page.focus('input[name="q-english"][value="no"]');
  await page.keyboard.press('Space');
  await page.focus('input[name="q-tasks"][value="entities"]');
  await page.keyboard.press('Space');
  await page.screenshot({ path: `${RESULTS}/phone-questionnaire.png`, fullPage: true });
  await page.focus('input[name="q-age"]');
  await page.keyboard.press('Enter');
  // Test item 1, the check as item 2 of 4, then items 3 and 4.
  await answer(page, 'positive', 'Test item 1 of 4');
  assert.match(await page.textContent('.item .context, article.item'), /checks attention/);
  await answer(page, 'positive', 'Test item 2 of 4');
  await answer(page, 'negative', 'Test item 3 of 4');
  await answer(page, 'positive', 'Test item 4 of 4');
  await page.waitForSelector('form.questionnaire[data-stage="after"]');
  await page.check('input[name="q-difficulty"][value="2"]');
  await page.fill('input[name="q-feedback"]', '  clear enough  ');
  await page.click('form.questionnaire button.submit');
  await page.waitForSelector('.done .debriefing strong:text("models")');
  assert.equal(await page.textContent('.completion-code'), 'PAGES-OK');
  // With a debriefing to read, the way back waits for the worker.
  await page.waitForTimeout(3500);
  assert.equal(new URL(page.url()).pathname, `/study/${study}`);
  assert.equal(await page.getAttribute('a.return-link', 'href'), 'https://app.prolific.com/submissions/complete?cc=PAGES-OK');
  await page.screenshot({ path: `${RESULTS}/phone-debriefing.png`, fullPage: true });
  const stored = env.sql("SELECT q.stage, q.answers_json FROM questionnaire_answers q ORDER BY q.stage DESC");
  assert.deepEqual(stored, [['before', '{"age":34.0,"english":"no","tasks":["entities"]}'], ['after', '{"difficulty":2.0,"feedback":"clear enough"}']]);
  assert.deepEqual(env.sql('SELECT check_index, passed FROM attention_answers'), [[0, 1]]);
  assert.equal(env.sql('SELECT consent_hash FROM assignments')[0][0].length, 64);
  assert.deepEqual(page.errors, []);
  await context.close();
});

test('declining consent frees the place and goes back to Prolific with the no-consent code', async () => {
  const context = await env.browser.newContext();
  await context.route('https://app.prolific.com/**', (route) =>
    route.fulfill({ status: 200, contentType: 'text/html', body: '<p id="prolific">back</p>' }));
  const page = await newPage(env.browser, { context });
  const before = env.sql('SELECT COUNT(*) FROM assignments')[0][0];
  await joinStudy(page, link('pages-decliner'));
  await page.click('button.decline');
  await page.click('button.confirm');
  await page.waitForSelector('.declined .step-heading:text("You did not consent")');
  assert.match(await page.textContent('.declined'), /nothing was recorded but your refusal/);
  assert.equal(await page.getAttribute('a.return-link', 'href'), 'https://app.prolific.com/submissions/complete?cc=NOCONSENT');
  await page.waitForURL('https://app.prolific.com/submissions/complete?cc=NOCONSENT', { timeout: 15000 });
  assert.equal(env.sql('SELECT COUNT(*) FROM assignments')[0][0], before);
  assert.deepEqual(env.sql("SELECT COUNT(*) FROM users WHERE name = 'prolific:pages-decliner'"), [[0]]);
  assert.deepEqual(env.sql('SELECT platform FROM consent_refusals'), [['prolific']]);
  await context.close();
});

test('axe-core finds no violations on the consent page and the questionnaire', async () => {
  const context = await env.browser.newContext({ bypassCSP: true });
  const page = await newPage(env.browser, { context });
  const violations = async () => {
    await page.addScriptTag({ path: AXE });
    const v = await page.evaluate(async () => (await window.axe.run(document, { resultTypes: ['violations'] })).violations);
    return v.map((x) => `${x.id}: ${x.help} (${x.nodes.map((n) => n.target.join(' ')).join(', ')})`);
  };
  await joinStudy(page, link('pages-axe'));
  await page.waitForSelector('.consent');
  assert.deepEqual(await violations(), [], 'consent page');
  await page.click('button.accept');
  await page.waitForSelector('button.confirm');
  assert.deepEqual(await violations(), [], 'consent confirmation');
  await page.click('button.confirm');
  await page.waitForSelector('form.questionnaire');
  assert.deepEqual(await violations(), [], 'questionnaire');
  await context.close();
});

test('the study form names every problem at once, clears a fixed one, and is offered to admins only', async () => {
  const page = await newPage(env.browser);
  await signIn(page, env.base, USERS.admin);
  await page.click('a[href="/studies"]');
  await page.waitForSelector('select[name="task"] option[value="SST-2"]', { state: 'attached' });
  await page.selectOption('select[name="task"]', 'SST-2');
  await page.fill('input[name="annotators"]', '0');
  await page.fill('input[name="rate"]', 'lots');
  await page.fill('input[name="code"]', 'not a code!');
  await page.fill('input[name="completion_url"]', 'http://example.org/done');
  await page.click('details.study-pages summary');
  await page.fill('textarea[name="questionnaire"]', '{');
  await page.click('form.config button[type="submit"]');
  const alert = '.create-study [role="alert"]';
  await page.waitForSelector(alert);
  // Every problem at once, the name, the completion code and URL among them.
  const first = await page.$$eval(`${alert} li`, (li) => li.map((l) => l.textContent));
  assert.equal(first.length, 6, first.join(' | '));
  for (const field of [/^Name:/m, /annotators/i, /rate/i, /Completion code/, /Prolific completion URL/, /Questionnaires \(JSON\)/]) {
    assert.match(first.join('\n'), field);
  }
  // Fixing a field takes its problem away before the next send; the others stay.
  await page.fill('input[name="annotators"]', '3');
  await page.waitForFunction((a) => document.querySelectorAll(`${a} li`).length === 5, alert);
  await page.fill('input[name="name"]', 'Many problems');
  await page.fill('input[name="code"]', 'DONE-7');
  await page.fill('input[name="completion_url"]', '');
  await page.waitForFunction((a) => document.querySelectorAll(`${a} li`).length === 2, alert);
  await page.fill('input[name="rate"]', '12.50');
  await page.fill('textarea[name="questionnaire"]', '');
  await page.waitForSelector(alert, { state: 'detached' });
  await page.close();
  // A researcher reads the studies but is offered no form to create or change one.
  const rita = await newPage(env.browser);
  await signIn(rita, env.base, USERS.researcher);
  await rita.goto(`${env.base}/studies`);
  await rita.waitForSelector('table.studies');
  assert.equal(await rita.$('form.config'), null);
  await rita.goto(`${env.base}/studies/${study}`);
  await rita.waitForSelector('.edit-study');
  assert.equal(await rita.$('form.config'), null);
  assert.match(await rita.textContent('.edit-study'), /Only an admin can change/);
  assert.deepEqual(rita.errors, []);
  await rita.close();
});

test('an admin sets the pages in the study form: bad JSON and bad checks are named, the rest is kept', async () => {
  const page = await newPage(env.browser);
  await signIn(page, env.base, USERS.admin);
  await page.click('a[href="/studies"]');
  await page.waitForSelector('select[name="task"] option[value="SST-2"]', { state: 'attached' });
  await page.selectOption('select[name="task"]', 'SST-2');
  await page.fill('input[name="name"]', 'Form pages');
  await page.fill('input[name="scenarios"]', '0');
  await page.click('details.study-pages summary');
  await page.fill('textarea[name="consent"]', 'You agree to **label** reviews.');
  await page.fill('input[name="contact"]', 'Dr. Ada, ada@uni.example');
  await page.fill('textarea[name="questionnaire"]', '{"after": [{"id": "fun", "text": "Was it fun?", "kind": "likert"');
  await page.click('form.config button[type="submit"]');
  await page.waitForSelector('.create-study [role="alert"]');
  assert.match(await page.textContent('.create-study [role="alert"]'), /Questionnaires \(JSON\): EOF/);
  await page.fill('textarea[name="questionnaire"]', '{"after": [{"id": "fun", "text": "Was it fun?", "kind": "likert"}]}');
  await page.fill('textarea[name="attention_checks"]', '[{"after": 5, "text": "Choose neutral.", "question": "q", "answer": ["neutral"]}]');
  await page.click('form.config button[type="submit"]');
  await page.waitForFunction(() => /after 5 test items/.test(document.querySelector('.create-study')?.textContent));
  assert.match(await page.textContent('.create-study'), /the answer must be one of the labels \(positive, negative\)/);
  page.errors = page.errors.filter((e) => !e.includes('create_study') && !e.includes('status of 400'));
  await page.fill('textarea[name="attention_checks"]', '[{"after": 1, "text": "Choose positive.", "question": "q", "answer": ["positive"]}]');
  await page.fill('textarea[name="debriefing"]', 'Thanks!');
  await page.click('form.config button[type="submit"]');
  await page.waitForSelector('.create-study .saved a');
  await page.click('.create-study .saved a');
  // The study's page shows the pages as saved, in the same fields.
  await page.waitForSelector('textarea[name="consent"]', { state: 'attached' });
  assert.equal(await page.inputValue('textarea[name="consent"]'), 'You agree to **label** reviews.');
  assert.match(await page.inputValue('textarea[name="questionnaire"]'), /"kind": "likert"/);
  assert.match(await page.inputValue('textarea[name="attention_checks"]'), /"answer": \[\s*"positive"\s*\]/);
  assert.equal(await page.inputValue('textarea[name="debriefing"]'), 'Thanks!');
  assert.deepEqual(page.errors, []);
  await page.close();
});
