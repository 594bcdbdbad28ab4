// A study in the field: inside MTurk's frame on another site with third-party cookies
// blocked (preview, accept, work, the HIT submitted by the end page), handed back to Prolific
// by itself, unsent work kept through reload, Back and a crashed tab, a stale second tab, Back
// to the start page, and Start pressed before the bundle has arrived.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { start, newPage, joinStudy, writeSst, writeSquad } from './server.mjs';

const SPAN_TEXT = 'Ada met Ben at the old mill. Later they walked to Kew Gardens together.';

function writeFixture(dir) {
  const root = join(dir, 'fixture');
  writeSst(join(root, 'SST-2'), [
    ['a joyous ride from start to finish ', 'positive'],
    ['a slog with no payoff ', 'negative'],
    ['the cast shines in every scene ', 'positive'],
  ]);
  writeSquad(join(root, 'SQuAD-v2'), SPAN_TEXT, [
    ['f1', 'Who met?', ['Ada', 'Ben']],
    ['f2', 'Where did they walk?', ['Kew Gardens']],
  ]);
  return root;
}

// The crowd platform's page: another site (127.0.0.1 beside the study's localhost) that shows
// the study link in a frame, as MTurk shows an ExternalQuestion.
const platform = http.createServer((req, res) => {
  const src = new URL(req.url, 'http://x').searchParams.get('src') ?? '';
  res.writeHead(200, { 'Content-Type': 'text/html' });
  res.end(`<!DOCTYPE html><title>HIT</title><iframe title="HIT" src="${src.replace(/"/g, '&quot;')}" style="width:390px;height:800px"></iframe>`);
});

let env;
let platformBase;
const studies = {};
before(async () => {
  await new Promise((r) => platform.listen(0, '127.0.0.1', r));
  platformBase = `http://127.0.0.1:${platform.address().port}`;
  env = await start((cli, dir) => {
    cli('import', 'clues', writeFixture(dir));
    const id = (out) => Number(/created study (\d+)/.exec(out)[1]);
    const create = (...args) => id(cli('study', 'create', '--open', '--annotators', '5', '--scenarios', '0', ...args));
    studies.mturk = create('--task', 'SST-2', '--name', 'HIT study');
    studies.prolific = create('--task', 'SST-2', '--name', 'Prolific study', '--code', 'BACK-HOME');
    studies.spans = create('--task', 'SQuAD-v2', '--name', 'Draft study');
    studies.labels = create('--task', 'SST-2', '--name', 'Tab study');
    // A study with its own pages: consent, a question before, a check, a debriefing.
    const pages = join(dir, 'pages');
    mkdirSync(pages);
    writeFileSync(join(pages, 'consent.md'), 'You will label three reviews.');
    writeFileSync(join(pages, 'questionnaire.json'), JSON.stringify({ before: [
      { id: 'english', text: 'Is English your first language?', kind: 'single_choice', options: ['yes', 'no'], required: true }] }));
    writeFileSync(join(pages, 'attention.json'), JSON.stringify([
      { after: 1, text: 'A check: choose positive.', question: 'positive or negative?', answer: ['positive'] }]));
    writeFileSync(join(pages, 'debriefing.md'), 'One item checked attention.');
    studies.pages = create('--task', 'SST-2', '--name', 'Pages HIT', '--pages', pages, '--contact', 'ada@uni.example');
  }, {
    // The study as it runs behind TLS (the cookie is Secure; Chromium treats localhost as a
    // secure origin), framed by the platform's site; third-party cookies blocked.
    host: 'localhost',
    serveArgs: ['--secure-cookies', '--frame-ancestors', platformBase],
    browserArgs: ['--test-third-party-cookie-phaseout'],
  });
});
after(async () => {
  await env?.stop();
  platform.close();
});

const prolificLink = (study, pid) => `${env.base}/join/${study}?PROLIFIC_PID=${pid}&STUDY_ID=st&SESSION_ID=se`;
const count = (table) => env.sql(`SELECT COUNT(*) FROM ${table}`)[0][0];

/** Answers every label item of the page (or frame) in front of it until the end page. */
async function answerAll(scope) {
  for (;;) {
    await scope.locator('.item, .done').first().waitFor();
    if (await scope.locator('.done').count()) return;
    const heading = await scope.locator('.item h2.progress').textContent();
    await scope.locator('input[name="label"][value="positive"]').check();
    await scope.locator('input[name="confidence"][value="4"]').check();
    await scope.locator('button.submit').click();
    await scope.locator('.item h2.progress, .done').first().filter({ hasNotText: heading }).waitFor();
  }
}

test('inside MTurk\'s frame with third-party cookies blocked: the preview takes nothing, the worker completes the HIT, and a second HIT is told to go back', { timeout: 120000 }, async () => {
  const context = await env.browser.newContext();
  const submitted = [];
  await context.route('https://workersandbox.mturk.com/**', (route) => {
    submitted.push({ url: route.request().url(), body: route.request().postData() });
    route.fulfill({ status: 200, contentType: 'text/html', body: '<p id="turk">HIT submitted</p>' });
  });
  const page = await newPage(env.browser, { context });
  const turk = 'hitId=HIT1&turkSubmitTo=https%3A%2F%2Fworkersandbox.mturk.com';
  const framed = (query) => `${platformBase}/?src=${encodeURIComponent(`${env.base}/join/${studies.mturk}?${query}`)}`;
  const frame = page.frameLocator('iframe');

  // Preview: the task and an example item, no Start, nothing stored.
  const users = count('users');
  await page.goto(framed(`assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&${turk}`));
  await frame.locator('.preview-note').waitFor();
  assert.match(await frame.locator('.preview-note').textContent(), /This is a preview.*Accept the HIT on MTurk to begin/s);
  assert.match(await frame.locator('.description').textContent(), /movie review/);
  assert.equal(await frame.locator('.preview-item .question').textContent(), 'positive or negative?');
  assert.equal(await frame.locator('form').count(), 0, 'no Start in a preview');
  const posted = await context.request.post(`${env.base}/join/${studies.mturk}?workerId=W1&assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&${turk}`, { maxRedirects: 0 });
  assert.equal(posted.status(), 409);
  assert.match(await posted.text(), /accept it on MTurk to begin/);
  assert.equal(count('users'), users);
  assert.equal(count('assignments'), 0);

  // Accepted: Start, the items, and the end page submits the HIT to MTurk by itself.
  await page.goto(framed(`workerId=W1&assignmentId=ASG1&${turk}`));
  await frame.locator('form.start button').click();
  await frame.locator('main[data-hydrated="true"]').waitFor({ timeout: 30000 });
  await answerAll(frame);
  assert.match(await frame.locator('.hand-back[role="status"]').textContent(), /Submitting the HIT on MTurk for you in 3 seconds/);
  await frame.locator('#turk').waitFor({ timeout: 15000 });
  assert.equal(submitted.length, 1);
  assert.equal(submitted[0].url, 'https://workersandbox.mturk.com/mturk/externalSubmit');
  const form = new URLSearchParams(submitted[0].body);
  assert.equal(form.get('assignmentId'), 'ASG1');
  const [[code, status]] = env.sql(
    `SELECT c.config_json, a.status FROM assignments a JOIN studies s ON s.id = a.study_id
     JOIN study_configs c ON c.id = s.config_id WHERE a.study_id = $1`, studies.mturk);
  assert.equal(form.get('completion_code'), JSON.parse(code).completion_code);
  assert.equal(status, 'finished');
  assert.deepEqual(page.errors, []);

  // The same worker accepts a second HIT of the study: the frame says they took part already
  // and to return it; there is no Start, and nothing is submitted to MTurk for it.
  await page.goto(framed(`workerId=W1&assignmentId=ASG2&hitId=HIT2&turkSubmitTo=https%3A%2F%2Fworkersandbox.mturk.com`));
  const refusal = frame.locator('[role="alert"]');
  await refusal.waitFor();
  assert.match(await refusal.textContent(), /already taken part in this study and finished it.*return the HIT on MTurk.*ASG2/s);
  assert.equal(await frame.locator('form').count(), 0);
  await page.waitForTimeout(4000);
  assert.equal(submitted.length, 1);
  // The researcher's pay sheet lists both assignments with what became of each.
  const [[crowd]] = env.sql('SELECT crowd_json FROM assignments WHERE study_id = $1', studies.mturk);
  assert.deepEqual(JSON.parse(crowd).presented.map((p) => [p.id, p.outcome]), [['ASG1', 'in_hand'], ['ASG2', 'told_to_return']]);
  page.errors = page.errors.filter((e) => !e.includes('HTTP 409') && !e.includes('status of 409'));
  assert.deepEqual(page.errors, []);
  await context.close();
});

test('every MTurk site may frame the study link (live, classic, sandbox, requester previews); another site may not', { timeout: 120000 }, async () => {
  const context = await env.browser.newContext();
  // The study as a public HTTPS site (its answers, headers and all, come from the real server),
  // framed by MTurk's sites as they are on the internet.
  const lab = 'https://lab.example';
  await context.route(`${lab}/**`, async (route) => {
    const response = await route.fetch({ url: route.request().url().replace(lab, env.base) });
    await route.fulfill({ response });
  });
  const link = `${lab}/join/${studies.mturk}?workerId=FRAMED&assignmentId=ASGF&hitId=HITF`;
  const hit = `<!DOCTYPE html><title>HIT</title><iframe title="HIT" src="${link.replace(/&/g, '&amp;')}"></iframe>`;
  const sites = ['https://worker.mturk.com', 'https://www.mturk.com', 'https://workersandbox.mturk.com',
    'https://requester.mturk.com', 'https://requestersandbox.mturk.com', 'https://evil.example'];
  for (const site of sites) {
    await context.route(`${site}/**`, (route) => route.fulfill({ status: 200, contentType: 'text/html', body: hit }));
  }
  for (const site of sites) {
    const page = await context.newPage();
    const child = () => page.frames().find((f) => f !== page.mainFrame());
    await page.goto(`${site}/projects/1/tasks`);
    if (site === 'https://evil.example') {
      // Chromium puts its own error page in a frame that the policy refuses.
      for (let i = 0; i < 100 && !(child()?.url() ?? '').startsWith('chrome-error:'); i++) await page.waitForTimeout(100);
      assert.match(child()?.url() ?? '', /^chrome-error:/, site);
    } else {
      await page.frameLocator('iframe').locator('form.start button').waitFor({ timeout: 10000 });
      assert.equal(child().url(), link, site);
    }
    await page.close();
  }
  await context.close();
});

test('a Prolific worker is handed back to the completion URL by the end page itself', { timeout: 120000 }, async () => {
  const context = await env.browser.newContext();
  await context.route('https://app.prolific.com/**', (route) =>
    route.fulfill({ status: 200, contentType: 'text/html', body: '<p id="prolific">Submission complete</p>' }));
  const page = await newPage(env.browser, { context });
  await joinStudy(page, prolificLink(studies.prolific, 'hand-back-worker'));
  await answerAll(page);
  // The link stays as a fallback while the page counts down.
  assert.equal(await page.getAttribute('a.return-link', 'href'), 'https://app.prolific.com/submissions/complete?cc=BACK-HOME');
  await page.waitForURL('https://app.prolific.com/submissions/complete?cc=BACK-HOME', { timeout: 15000 });
  await page.waitForSelector('#prolific');
  await context.close();
});

test('unsent answers survive a reload, Back and a crashed tab, and leaving asks first', { timeout: 120000 }, async () => {
  const context = await env.browser.newContext();
  let page = await newPage(env.browser, { context });
  const dialogs = [];
  const watch = (p) => p.on('dialog', (d) => { dialogs.push(d.type()); d.accept(); });
  watch(page);
  await joinStudy(page, prolificLink(studies.spans, 'draft-worker'));
  const select = (needle) => page.evaluate((n) => {
    const r = window.rangeOfText(document.querySelector('.span-context'), n);
    getSelection().setBaseAndExtent(r.startContainer, r.startOffset, r.endContainer, r.endOffset);
  }, needle);
  const answers = () => page.$$eval('table.answers .answer-text', (tds) => tds.map((td) => td.textContent));
  const question = await page.textContent('.item .question');
  const wanted = question === 'Who met?' ? ['Ada', 'Ben'] : ['Kew Gardens', 'old mill'];
  for (const w of wanted) {
    await select(w);
    await page.waitForFunction((t) => document.querySelector('.selected-text')?.textContent === t, w);
    await page.click('button.add-answer');
    await page.waitForFunction((n) => document.querySelectorAll('table.answers tbody tr').length === n, wanted.indexOf(w) + 1);
  }
  const expected = await answers();
  assert.equal(await page.getAttribute('table.answers', 'aria-label'), 'Your answers');
  const restored = async (p) => {
    await p.waitForSelector('main[data-hydrated="true"]');
    await p.waitForFunction((n) => document.querySelectorAll('table.answers tbody tr').length === n, expected.length);
    assert.deepEqual(await p.$$eval('table.answers .answer-text', (tds) => tds.map((td) => td.textContent)), expected);
    assert.equal(await p.textContent('.item .question'), question);
  };
  // Reload: the browser asks first (unsent work), then the answers are back.
  await page.reload();
  await restored(page);
  assert.deepEqual(dialogs, ['beforeunload']);
  // Away and Back.
  await page.goto(`${env.base}/`);
  await page.goBack();
  await restored(page);
  // The tab crashes; the worker opens the study again.
  const cdp = await context.newCDPSession(page);
  const crashed = page.waitForEvent('crash');
  cdp.send('Page.crash').catch(() => {});
  await crashed;
  page = await newPage(env.browser, { context });
  watch(page);
  await page.goto(`${env.base}/study/${studies.spans}`);
  await restored(page);
  const sent = () => env.sql(
    `SELECT COUNT(*) FROM assignment_items i JOIN assignments a ON a.id = i.assignment_id
     JOIN users u ON u.id = a.worker_id WHERE u.name = 'prolific:draft-worker' AND i.submitted_at IS NOT NULL`)[0][0];
  assert.equal(sent(), 0, 'nothing was sent');
  // Sent: the draft is gone, and leaving no longer asks.
  await page.click('button.submit');
  await page.waitForFunction((q) => document.querySelector('.item .question')?.textContent !== q, question);
  assert.equal(sent(), 1);
  assert.deepEqual(await page.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith('clues-draft:'))), []);
  const asked = dialogs.length;
  await page.reload();
  await page.waitForSelector('main[data-hydrated="true"]');
  assert.equal(dialogs.length, asked, 'no question without unsent work');
  // A picked label and confidence are kept the same way.
  await joinStudy(page, prolificLink(studies.labels, 'draft-worker'));
  await page.check('input[name="label"][value="negative"]');
  await page.check('input[name="confidence"][value="2"]');
  await page.reload();
  await page.waitForSelector('main[data-hydrated="true"]');
  await page.waitForFunction(() => document.querySelector('input[name="label"][value="negative"]').checked
    && document.querySelector('input[name="confidence"][value="2"]').checked);
  assert.equal(await page.isDisabled('button.submit'), false);
  // Closing the tab with unsent work asks too.
  const before = dialogs.length;
  await page.close({ runBeforeUnload: true });
  await new Promise((r) => setTimeout(r, 500));
  assert.deepEqual(dialogs.slice(before), ['beforeunload']);
  await context.close();
});

test('a shared browser: the next worker never sees the last one\'s unsent answer; the end page leaves no draft', { timeout: 120000 }, async () => {
  const context = await env.browser.newContext();
  const page = await newPage(env.browser, { context });
  page.on('dialog', (d) => d.accept());
  const drafts = () => page.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith('clues-draft:')));
  // Worker A picks a label and a confidence, sends nothing, and leaves.
  await joinStudy(page, prolificLink(studies.labels, 'shared-browser-a'));
  await page.check('input[name="label"][value="negative"]');
  await page.check('input[name="confidence"][value="2"]');
  await page.waitForFunction(() => Object.keys(localStorage).some((k) => k.startsWith('clues-draft:')));
  const left = await drafts();
  assert.equal(left.length, 1);
  // Worker B joins in the same browser: the same item number, nothing chosen for them.
  await joinStudy(page, prolificLink(studies.labels, 'shared-browser-b'));
  assert.equal(await page.textContent('.item h2.progress'), 'Test item 1 of 3');
  await page.waitForTimeout(300);
  assert.equal(await page.locator('input[name="label"]:checked').count(), 0);
  assert.equal(await page.locator('input[name="confidence"]:checked').count(), 0);
  assert.equal(await page.isDisabled('button.submit'), true);
  // B works to the end page: none of B's drafts is left (A's place keeps A's own).
  await page.check('input[name="label"][value="positive"]');
  await answerAll(page);
  assert.deepEqual(await drafts(), left);
  assert.deepEqual(page.errors, []);
  await context.close();
});

test('a stale second tab moves on by itself; Back offers to continue; the item is the same', { timeout: 120000 }, async () => {
  const context = await env.browser.newContext();
  const first = await newPage(env.browser, { context });
  await joinStudy(first, prolificLink(studies.labels, 'two-tab-worker'));
  const second = await newPage(env.browser, { context });
  await second.goto(`${env.base}/study/${studies.labels}`);
  await second.waitForSelector('main[data-hydrated="true"]');
  assert.equal(await second.textContent('.item h2.progress'), 'Test item 1 of 3');
  // Each Help is named by its label.
  assert.deepEqual(await second.$$eval('details.help summary', (ss) => ss.map((s) => s.getAttribute('aria-label'))),
    ['Help: positive', 'Help: negative']);
  // The first tab answers item 1; the second, still showing it, tries another answer.
  await first.check('input[name="label"][value="negative"]');
  await first.check('input[name="confidence"][value="2"]');
  await first.click('button.submit');
  await first.waitForFunction(() => document.querySelector('.item h2.progress')?.textContent === 'Test item 2 of 3');
  await second.check('input[name="label"][value="positive"]');
  await second.check('input[name="confidence"][value="5"]');
  await second.click('button.submit');
  await second.waitForFunction(() => document.querySelector('.item h2.progress')?.textContent === 'Test item 2 of 3');
  assert.match(await second.textContent('.notice'), /not stored: This answer was already submitted.*This is where you are now/);
  const stored = env.sql(
    `SELECT i.answer_json FROM assignment_items i JOIN assignments a ON a.id = i.assignment_id
     JOIN users u ON u.id = a.worker_id WHERE u.name = 'prolific:two-tab-worker' AND i.submitted_at IS NOT NULL`);
  assert.equal(stored.length, 1);
  assert.match(stored[0][0], /negative/);
  // Back from the study page: the start page says Start continues.
  await first.goBack();
  await first.waitForSelector('form.start');
  assert.match(await first.textContent('.start-text'), /^Continue where you left off/);
  assert.equal(await first.textContent('form.start button'), 'Continue');
  await first.click('form.start button');
  await first.waitForSelector('main[data-hydrated="true"]');
  assert.equal(await first.textContent('.item h2.progress'), 'Test item 2 of 3');
  assert.deepEqual(first.errors, []);
  await context.close();
});

/**
 * Start pressed as soon as the button is there, long before the bundle can have arrived, on a
 * phone's network: the study page must hydrate with the wasm of `bundle` (the worker bundle of
 * the study's answer form) fetched once, the start page's preload, and no other worker bundle.
 */
async function startAtOnce(study, pid, bundle, check = async () => {}) {
  const context = await env.browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  const page = await newPage(env.browser, { context });
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 150, downloadThroughput: 200000, uploadThroughput: 100000 });
  const wasm = new Map();
  const others = [];
  cdp.on('Network.requestWillBeSent', (e) => {
    const name = /\/(clues-lab-worker(?:-spans)?)\.[0-9a-f]+\.wasm$/.exec(e.request.url)?.[1];
    if (name === bundle) wasm.set(e.requestId, 'network');
    else if (name) others.push(e.request.url);
  });
  const cached = (id) => { if (wasm.has(id)) wasm.set(id, 'cache'); };
  cdp.on('Network.requestServedFromCache', (e) => cached(e.requestId));
  cdp.on('Network.responseReceived', (e) => {
    if (e.response.fromDiskCache || e.response.fromPrefetchCache) cached(e.requestId);
  });
  cdp.on('Network.loadingFailed', (e) => { if (wasm.has(e.requestId)) wasm.set(e.requestId, `failed: ${e.errorText}`); });
  await page.goto(prolificLink(study, pid), { waitUntil: 'commit' });
  await page.click('form.start button');
  await page.waitForSelector('main[data-hydrated="true"]', { timeout: 60000 });
  const fetched = [...wasm.values()];
  assert.equal(fetched.filter((v) => v === 'network').length, 1, `the wasm came over the network once: ${fetched}`);
  assert.equal(fetched.filter((v) => v.startsWith('failed')).length, 0, `no preload was dropped: ${fetched}`);
  assert.deepEqual(others, [], 'no other worker bundle was fetched');
  await check(page);
  assert.deepEqual(page.errors, []);
  await context.close();
}

test('Start pressed at once waits for the preloaded bundle instead of fetching it twice', { timeout: 120000 }, async () => {
  await startAtOnce(studies.labels, 'early-start-worker', 'clues-lab-worker');
});

test('a span study\'s start page preloads the bundle with the span form, and its page hydrates with it', { timeout: 120000 }, async () => {
  await startAtOnce(studies.spans, 'early-span-worker', 'clues-lab-worker-spans', async (page) => {
    // The span form is there and hydrated: its text can be selected and its buttons pressed.
    assert.ok(await page.isVisible('.item .span-context'));
    assert.ok(await page.isEnabled('.item button.no-answer'));
  });
});

test('inside MTurk\'s frame: consent, a question, a check among the items, the debriefing, then the HIT; declining asks to return it', { timeout: 120000 }, async () => {
  const context = await env.browser.newContext();
  const submitted = [];
  await context.route('https://workersandbox.mturk.com/**', (route) => {
    submitted.push(route.request().postData());
    route.fulfill({ status: 200, contentType: 'text/html', body: '<p id="turk">HIT submitted</p>' });
  });
  const page = await newPage(env.browser, { context });
  const turk = 'hitId=HIT2&turkSubmitTo=https%3A%2F%2Fworkersandbox.mturk.com';
  const framed = (query) => `${platformBase}/?src=${encodeURIComponent(`${env.base}/join/${studies.pages}?${query}`)}`;
  const frame = page.frameLocator('iframe');
  await page.goto(framed(`workerId=W7&assignmentId=ASG7&${turk}`));
  await frame.locator('form.start button').click();
  await frame.locator('main[data-hydrated="true"]').waitFor({ timeout: 30000 });
  await frame.locator('button.accept').click();
  await frame.locator('button.confirm').click();
  await frame.locator('input[name="q-english"][value="yes"]').check();
  await frame.locator('form.questionnaire button.submit').click();
  await answerAll(frame);
  assert.equal(await frame.locator('.debriefing p').textContent(), 'One item checked attention.');
  // With a debriefing, the HIT waits for the worker's button.
  await page.waitForTimeout(3500);
  assert.equal(submitted.length, 0);
  await frame.locator('form.mturk-submit button').click();
  await frame.locator('#turk').waitFor({ timeout: 15000 });
  assert.equal(new URLSearchParams(submitted[0]).get('assignmentId'), 'ASG7');
  assert.deepEqual(env.sql('SELECT passed FROM attention_answers'), [[1]]);
  assert.deepEqual(page.errors, []);
  // A second worker declines in the frame: told to return the HIT, nothing kept.
  await page.goto(framed(`workerId=W8&assignmentId=ASG8&${turk}`));
  await frame.locator('form.start button').click();
  await frame.locator('main[data-hydrated="true"]').waitFor({ timeout: 30000 });
  await frame.locator('button.decline').click();
  await frame.locator('button.confirm').click();
  assert.match(await frame.locator('.declined [role="status"]').textContent(), /return the HIT on MTurk/);
  assert.deepEqual(env.sql("SELECT COUNT(*) FROM users WHERE name = 'mturk:W8'"), [[0]]);
  await context.close();
});
