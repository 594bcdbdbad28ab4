// The worker's page as workers meet it: one request per answer with focus and the live region
// following each step; a phone (the item on the first screen, touch selection, 44 px targets); keyboard
// character steps and the find box; the form before hydration; axe-core on every page.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { start, newPage, openHydrated, joinStudy, signIn, writeSst, writeSquad, USERS, RESULTS } from './server.mjs';

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
const cpOffset = (text, needle) => [...text.slice(0, text.indexOf(needle))].length;

const SPAN_TEXT = "The guide Pasang Lhamu's team met Ang Rita's crew. Later they rested at Namche Bazaar, where the trek ends.";

function writeFixture(dir) {
  const root = join(dir, 'fixture');
  writeSquad(join(root, 'SQuAD-v2'), SPAN_TEXT, [
    ['w1', 'Who were the guides?', ['Pasang Lhamu', 'Ang Rita']],
    ['w2', 'Where did they rest?', ['Namche Bazaar']],
  ]);
  // A task of the researcher's own: the CLUES layout plus task.json (outside the data root).
  const own = join(dir, 'tickets');
  mkdirSync(own, { recursive: true });
  writeFileSync(join(own, 'task.json'), JSON.stringify({
    name: 'Tickets', family: 'classification',
    description: 'Decide what a support ticket asks for.',
    labels: [
      { name: 'bug', definition: 'Something that worked is broken.', example: 'The app crashes when I press Save.' },
      { name: 'feature', definition: 'Something new is wanted.', example: 'Please add a dark mode.' },
    ],
  }));
  const ticket = (id, context, label) => JSON.stringify({ id, context, question: 'bug or feature?', answer: [label] });
  writeFileSync(join(own, 'tickets_test.jsonl'), [ticket(1, 'Export to CSV, please.', 'feature'), ticket(2, 'Login fails since Monday.', 'bug')].join('\n') + '\n');
  writeFileSync(join(own, 'tickets_train_2_1.jsonl'), [ticket(3, 'Add a search box.', 'feature'), ticket(4, 'The page is blank.', 'bug')].join('\n') + '\n');
  writeSst(join(root, 'SST-2'), [
    ['a joyous ride from start to finish ', 'positive'],
    ['a slog with no payoff ', 'negative'],
    ['the cast shines in every scene ', 'positive'],
  ]);
  return root;
}

let env;
const studies = {};
before(async () => {
  env = await start((cli, dir) => {
    cli('import', 'clues', writeFixture(dir));
    studies.ownImport = cli('import', 'task', join(dir, 'tickets'));
    const id = (out) => Number(/created study (\d+)/.exec(out)[1]);
    const create = (...args) => id(cli('study', 'create', '--open', '--annotators', '5', ...args));
    studies.labels = create('--task', 'SST-2', '--name', 'Label study', '--scenarios', '0');
    studies.ten = create('--task', 'SST-2', '--name', 'Training study', '--scenarios', '10');
    studies.spans = create('--task', 'SQuAD-v2', '--name', 'Span study', '--scenarios', '0');
    studies.own = create('--task', 'Tickets', '--name', 'Ticket study', '--scenarios', '2', '--code', 'OWN-OK');
  });
});
after(async () => { await env?.stop(); });

const link = (study, pid) => `${env.base}/join/${study}?PROLIFIC_PID=${pid}&STUDY_ID=st&SESSION_ID=se`;

/** The API calls a page makes from now on (paths). */
function apiCalls(page) {
  const calls = [];
  page.on('request', (r) => { if (r.url().includes('/api/')) calls.push(new URL(r.url()).pathname); });
  return calls;
}

async function focusedHeading(page) {
  await page.waitForFunction(() => document.activeElement?.classList.contains('step-heading'));
  return page.evaluate(() => document.activeElement.textContent);
}

test('an answer is one request; focus moves to the new item and the live region says what came', async () => {
  const page = await newPage(env.browser);
  await joinStudy(page, link(studies.ten, 'focus-worker'));
  const calls = apiCalls(page);
  // Training: the acknowledgement carries the reveal; focus goes to Continue; Enter goes on.
  await page.check('input[name="label"][value="positive"]');
  await page.check('input[name="confidence"][value="4"]');
  await page.click('button.submit');
  await page.waitForSelector('.reveal');
  await page.waitForFunction(() => document.activeElement?.classList.contains('continue'));
  assert.match(await page.textContent('.live'), /^Saved\. Your answer is correct\. Press Continue\.$/);
  await page.keyboard.press('Enter');
  assert.equal(await focusedHeading(page), 'Training example 2 of 10');
  assert.match(await page.textContent('.live'), /^Saved\. Training example 2 of 10: positive or negative\?$/);
  assert.deepEqual(calls, ['/api/submit_answer', '/api/continue_study']);
  await page.close();

  const worker = await newPage(env.browser);
  await joinStudy(worker, link(studies.labels, 'one-request-worker'));
  const made = apiCalls(worker);
  for (const i of [1, 2]) {
    await worker.check('input[name="label"][value="negative"]');
    await worker.check('input[name="confidence"][value="2"]');
    await worker.keyboard.press('Tab');
    await worker.focus('button.submit');
    await worker.keyboard.press('Enter');
    assert.equal(await focusedHeading(worker), `Test item ${i + 1} of 3`);
    assert.match(await worker.textContent('.live'), new RegExp(`Test item ${i + 1} of 3`));
  }
  // Two answers, two requests: the page never asks for its state again.
  assert.deepEqual(made, ['/api/submit_answer', '/api/submit_answer']);
  await worker.click('button.skip');
  assert.equal(await focusedHeading(worker), 'Thank you, you are done.');
  assert.match(await worker.textContent('.live'), /You are done; your completion code is/);
  assert.deepEqual(worker.errors, []);
  await worker.close();
});

/** Where the selector's element lies on the first screen: its top and bottom in CSS px. */
const box = (page, selector) => page.$eval(selector, (e) => {
  const r = e.getBoundingClientRect();
  return { top: r.top + scrollY, bottom: r.bottom + scrollY };
});

test('on a phone: the item is on the first screen, the instructions one tap away, touch selection, 44 px targets', async () => {
  const context = await env.browser.newContext({
    viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true, deviceScaleFactor: 3,
  });
  const page = await newPage(env.browser, { context });
  await joinStudy(page, link(studies.spans, 'phone-worker'));
  // The question, the text and the answer buttons are on the first screen; the instructions
  // come after the item, reached by the Instructions link; no keyboard table on a touch screen.
  for (const part of ['.item .question', '.span-context', 'button.add-answer', 'button.submit', 'button.no-answer']) {
    const { bottom } = await box(page, part);
    assert.ok(bottom <= 844, `${part} ends at ${bottom} px, below the first screen`);
  }
  assert.ok((await box(page, 'aside.instructions')).top >= (await box(page, '.work')).bottom, 'the item comes first');
  assert.equal(await page.isVisible('.keyboard-help'), false, 'no keyboard table on touch');
  await page.tap('a.to-instructions');
  await page.waitForFunction(() => {
    const r = document.querySelector('aside.instructions').getBoundingClientRect();
    return r.top > -1 && r.top < innerHeight; // within a device pixel of the top
  });
  assert.match(await page.textContent('aside.instructions'), /press and hold a word, drag the handles/);
  await page.evaluate(() => scrollTo(0, 0));
  // Handles move the document's selection and fire no mouse events: only selectionchange.
  await page.evaluate(() => {
    const r = window.rangeOfText(document.querySelector('.span-context'), 'Namche Bazaar');
    getSelection().setBaseAndExtent(r.startContainer, r.startOffset, r.endContainer, r.endOffset);
  });
  await page.waitForFunction(() => document.querySelector('.selected-text')?.textContent === 'Namche Bazaar');
  await page.tap('button.add-answer');
  await page.waitForSelector('table.answers tbody tr');
  assert.equal(await page.textContent('.answer-text'), 'Namche Bazaar');
  assert.equal(await page.textContent('mark.answer-mark'), 'Namche Bazaar');
  const small = async () => page.$$eval(
    '.work button, .work input[type="search"], .work fieldset label, .work details.help summary',
    (els) => els.filter((e) => e.offsetParent !== null && e.getBoundingClientRect().height < 44)
      .map((e) => `${e.tagName}.${e.className}: ${e.getBoundingClientRect().height}`));
  assert.deepEqual(await small(), []);
  await page.screenshot({ path: `${RESULTS}/phone-span-item.png`, fullPage: true });
  // A label item on the same phone: options, the confidence scale on one line, and Submit all
  // on the first screen.
  await joinStudy(page, link(studies.labels, 'phone-worker-2'));
  assert.deepEqual(await small(), []);
  assert.ok((await box(page, 'button.submit')).bottom <= 844, 'Submit is on the first screen');
  const rows = await page.$$eval('fieldset.confidence label', (ls) => new Set(ls.map((l) => Math.round(l.getBoundingClientRect().top))).size);
  assert.equal(rows, 1, 'the five confidence levels are on one line');
  await page.screenshot({ path: `${RESULTS}/phone-label-item.png`, fullPage: true });
  assert.deepEqual(page.errors, []);
  await context.close();
});

test('the keyboard selects exactly: character steps past a possessive, and the find box', async () => {
  const page = await newPage(env.browser);
  await joinStudy(page, link(studies.spans, 'keyboard-worker'));
  const question = await page.textContent('.question');
  await page.focus('.span-context');
  await page.keyboard.press('Home');
  // By word: "guide", then "Pasang"; Shift extends by word ("Pasang Lhamu's") ...
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('Shift+ArrowRight');
  await page.keyboard.press('Shift+ArrowRight');
  assert.equal(await page.textContent('.selected-text'), "Pasang Lhamu's");
  // ... and Alt+Shift takes back one character at a time.
  await page.keyboard.press('Alt+Shift+ArrowLeft');
  await page.keyboard.press('Alt+Shift+ArrowLeft');
  assert.equal(await page.textContent('.selected-text'), 'Pasang Lhamu');
  assert.match(await page.textContent('.selected'), /Pasang Lhamu/);
  await page.keyboard.press('a');
  assert.match(await page.textContent('.live'), /Added "Pasang Lhamu": 1 answer\./);
  // The find box reaches text anywhere: type, Enter, Tab to the button, Enter.
  const wanted = question.startsWith('Where') ? 'Namche Bazaar' : 'Ang Rita';
  await page.focus('.find-input');
  await page.keyboard.type(wanted.toLowerCase());
  await page.keyboard.press('Enter');
  assert.equal(await page.textContent('.selected-text'), wanted);
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.className), 'add-answer');
  await page.keyboard.press('Enter');
  const rows = await page.$$eval('table.answers tbody tr', (trs) => trs.map((tr) =>
    [tr.querySelector('.answer-text').textContent, Number(tr.querySelector('.answer-offset').textContent)]));
  assert.deepEqual(rows, [['Pasang Lhamu', cpOffset(SPAN_TEXT, 'Pasang Lhamu')], [wanted, cpOffset(SPAN_TEXT, wanted)]]
    .sort((a, b) => a[1] - b[1]));
  assert.deepEqual(await page.$$eval('mark.answer-mark', (ms) => ms.map((m) => m.textContent)).then((m) => m.sort()),
    ['Pasang Lhamu', wanted].sort());
  // Remove is named for what it removes.
  assert.equal(await page.getAttribute('table.answers button.delete >> nth=0', 'aria-label'), 'Remove "Pasang Lhamu"');
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('with scripts off Start takes no place and says why; before the page is interactive its form is disabled', async () => {
  const context = await env.browser.newContext({ javaScriptEnabled: false });
  const page = await context.newPage();
  await page.goto(link(studies.labels, 'no-script-worker'));
  // The start page says what is recorded and that the study needs JavaScript.
  assert.match(await page.textContent('.recorded'), /this page records for each item only counts and times/);
  assert.match(await page.textContent('.start-page'), /needs JavaScript, which is turned off in this browser/);
  await page.click('form[method="post"] button[type="submit"]');
  assert.match(await page.textContent('[role="alert"]'), /needs JavaScript[\s\S]*no place was taken/);
  const made = env.sql('SELECT COUNT(*) FROM users WHERE name = $1', 'prolific:no-script-worker');
  assert.equal(Number(made[0][0]), 0);
  await context.close();
  // With scripts on, Start takes the place and the page works.
  const live = await newPage(env.browser);
  await joinStudy(live, link(studies.labels, 'no-script-worker'));
  assert.equal(await live.locator('.loading').count(), 0);
  assert.equal(await live.locator('.no-script').count(), 0);
  assert.equal(await live.isDisabled('input[name="label"] >> nth=0'), false);
  // The same place in a browser that does not run the page's script: the form is off and
  // says why, instead of loading for ever.
  const off = await env.browser.newContext({ javaScriptEnabled: false });
  await off.addCookies(await live.context().cookies());
  const still = await off.newPage();
  await still.goto(`${env.base}/study/${studies.labels}`);
  await still.waitForSelector('article.item');
  assert.equal(await still.isVisible('.loading'), false);
  assert.match(await still.textContent('.no-script'), /This page needs JavaScript, which is turned off in this browser/);
  for (const sel of ['button.submit', 'button.skip', 'input[name="label"] >> nth=0', 'input[name="confidence"] >> nth=0']) {
    assert.equal(await still.isDisabled(sel), true, sel);
  }
  await off.close();
  await live.close();
});

test('a task of our own (task.json beside CLUES-layout files) is imported and annotated end to end', async () => {
  assert.match(studies.ownImport, /Tickets \(classification\): imported/);
  assert.match(studies.ownImport, /training files: 1 \(k 2; splits 1\)/);
  const page = await newPage(env.browser);
  await joinStudy(page, link(studies.own, 'own-task-worker'));
  assert.match(await page.textContent('.description'), /Decide what a support ticket asks for\./);
  // The labels and their Help come from task.json.
  assert.deepEqual(await page.$$eval('input[name="label"]', (is) => is.map((i) => i.value)), ['bug', 'feature']);
  await page.click('.option >> nth=0 >> details.help summary');
  assert.match(await page.textContent('.option >> nth=0 >> .definition'), /Something that worked is broken\./);
  const answer = async (label) => {
    await page.check(`input[name="label"][value="${label}"]`);
    await page.check('input[name="confidence"][value="5"]');
    await page.click('button.submit');
  };
  // Two training examples with their golds, then the two test items.
  for (let i = 1; i <= 2; i++) {
    await page.waitForSelector(`text=Training example ${i} of 2`);
    const text = await page.textContent('.context');
    await answer(text.includes('search') ? 'feature' : 'bug');
    await page.waitForSelector('.reveal.right');
    await page.click('button.continue');
  }
  for (let i = 1; i <= 2; i++) {
    await page.waitForSelector(`text=Test item ${i} of 2`);
    const text = await page.textContent('.context');
    await answer(text.includes('CSV') ? 'feature' : 'bug');
  }
  await page.waitForSelector('.completion-code');
  assert.equal(await page.textContent('.completion-code'), 'OWN-OK');
  assert.match(await page.textContent('.done'), /average score 1\.00/);
  assert.deepEqual(page.errors, []);
  await page.close();
});

/** axe-core's violations on the page as it is now, as readable lines. */
async function violations(page) {
  await page.addScriptTag({ path: AXE });
  const v = await page.evaluate(async () => (await window.axe.run(document, { resultTypes: ['violations'] })).violations);
  return v.map((x) => `${x.id}: ${x.help} (${x.nodes.map((n) => n.target.join(' ')).join(', ')})`);
}

test('axe-core finds no violations on the worker pages and the staff pages', async () => {
  // axe-core is injected as an inline script, which the pages' script policy refuses.
  const context = await env.browser.newContext({ bypassCSP: true });
  const page = await newPage(env.browser, { context });
  const found = {};
  const check = async (name) => { found[name] = await violations(page); };
  await page.goto(link(studies.spans, 'axe-worker'));
  await check('start page');
  await page.click('form[method="post"] button[type="submit"]');
  await page.waitForSelector('main[data-hydrated="true"]');
  await check('span item');
  await page.focus('.find-input');
  await page.keyboard.type('Namche');
  await page.keyboard.press('Enter');
  await page.click('button.add-answer');
  await check('span item with an answer');
  await joinStudy(page, link(studies.ten, 'axe-worker-2'));
  await check('label item');
  await page.check('input[name="label"][value="negative"]');
  await page.check('input[name="confidence"][value="3"]');
  await page.click('button.submit');
  await page.waitForSelector('.reveal');
  await check('training reveal');
  await joinStudy(page, link(studies.labels, 'axe-worker-3'));
  for (let i = 0; i < 3; i++) {
    await page.waitForSelector('button.skip:not([disabled])');
    await page.click('button.skip');
    await page.waitForFunction((i) => !document.querySelector('article.item')
      || !document.querySelector('.progress').textContent.startsWith(`Test item ${i + 1} `), i);
  }
  await page.waitForSelector('.completion-code');
  await check('end page');
  await context.close();

  const staff = await newPage(env.browser, { context: await env.browser.newContext({ bypassCSP: true }) });
  await openHydrated(staff, `${env.base}/`);
  found['sign-in'] = await violations(staff);
  await signIn(staff, env.base, USERS.admin);
  await staff.waitForSelector('text=Signed in as');
  for (const path of ['/', '/studies', `/studies/${studies.spans}`, '/dashboard', '/machines', '/crossfit', '/tasks/SST-2']) {
    await openHydrated(staff, `${env.base}${path}`);
    await staff.waitForLoadState('networkidle');
    found[path] = await violations(staff);
  }
  await staff.context().close();
  const bad = Object.entries(found).filter(([, v]) => v.length);
  assert.deepEqual(bad, [], bad.map(([k, v]) => `${k}:\n  ${v.join('\n  ')}`).join('\n'));
});
