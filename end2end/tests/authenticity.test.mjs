// Authenticity signals as real workers make them, in Chromium: honest workers read, copy a word,
// glance away once, or answer fast by keyboard alone (not flagged); assisted workers copy each
// item to a chatbot in another tab and paste its reply, ask a chatbot in a window beside the page,
// or carry short pieces of each item to another tab (flagged). The researcher sees each worker's
// signals and level; nothing on the page blocks copying, pasting or leaving.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { start, newPage, openHydrated, joinStudy, signIn, writeSst, writeSquad, importColours, selectByMouse, answerLabelByKeys, USERS } from './server.mjs';

const REVIEWS = [
  ['a warm and funny film whose cast makes every small scene feel alive and true ', 'positive'],
  ['a tired story told slowly, with jokes that fall flat and characters nobody could care for ', 'negative'],
  ['the director finds beauty in ordinary lives and the ending earns every one of its tears ', 'positive'],
  ['two hours of noise and shouting that never adds up to a plot worth following at all ', 'negative'],
  ['a patient, generous portrait of a town that rewards anyone willing to sit still with it ', 'positive'],
];

const PASSAGE = 'The expedition left Lukla at dawn. After four days of walking the porters reached Namche Bazaar, where the whole team rested for two nights before the climb.';

let env;
let labels;
let texts;
let spans;
before(async () => {
  env = await start((cli, dir) => {
    writeSst(join(dir, 'data', 'SST-2'), REVIEWS);
    writeSquad(join(dir, 'data', 'SQuAD-v2'), PASSAGE, [
      ['p1', 'Where did the team rest?', ['Namche Bazaar']],
      ['p2', 'Where did the expedition leave from?', ['Lukla']],
    ]);
    cli('import', 'clues', join(dir, 'data'));
    const id = (out) => Number(/created study (\d+)/.exec(out)[1]);
    spans = id(cli('study', 'create', '--task', 'SQuAD-v2', '--name', 'Passages', '--scenarios', '0', '--annotators', '5', '--open'));
    labels = id(cli('study', 'create', '--task', 'SST-2', '--name', 'Reviews', '--scenarios', '0', '--annotators', '9', '--open'));
    importColours(cli, dir, [['What colour is a ripe lemon in the sun?', 'yellow'], ['What colour is fresh milk in a glass?', 'white']]);
    texts = id(cli('study', 'create', '--task', 'xf-colours-s100', '--name', 'Colours', '--scenarios', '0', '--annotators', '5', '--open'));
  });
});
after(async () => { await env?.stop(); });

const link = (study, pid) => `${env.base}/join/${study}?PROLIFIC_PID=${pid}&STUDY_ID=st&SESSION_ID=se`;
const pause = (ms) => new Promise((r) => setTimeout(r, ms));

/** The page goes to the background (another tab) for `ms`, then comes back. */
async function leave(page, ms) {
  const flip = (hidden) => page.evaluate((h) => {
    Object.defineProperty(document, 'hidden', { configurable: true, get: () => h });
    Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => (h ? 'hidden' : 'visible') });
    if (h) window.dispatchEvent(new Event('blur'));
    document.dispatchEvent(new Event('visibilitychange'));
    if (!h) window.dispatchEvent(new Event('focus'));
  }, hidden);
  await flip(true);
  await pause(ms);
  await flip(false);
}

/** A window beside the page takes the focus for `ms` (the page stays visible), then the worker
 * clicks back into the page. */
async function beside(page, ms) {
  await page.evaluate(() => window.dispatchEvent(new Event('blur')));
  await pause(ms);
  await page.evaluate(() => window.dispatchEvent(new Event('focus')));
}

/** Selects the item's whole text and copies it with the keyboard, as a worker does. */
async function copyItem(page, words = null) {
  await page.evaluate((n) => {
    const el = document.querySelector('.context');
    const range = document.createRange();
    if (n === null) {
      range.selectNodeContents(el);
    } else {
      const t = el.firstChild;
      range.setStart(t, 0);
      range.setEnd(t, t.data.split(' ').slice(0, n).join(' ').length);
    }
    getSelection().removeAllRanges();
    getSelection().addRange(range);
  }, words);
  await page.keyboard.press('Control+C');
}

/** Answers the label item on the page by its text, as a reader would. */
async function answerReview(page) {
  const text = await page.locator('.context').textContent();
  const label = REVIEWS.find(([t]) => t.trim() === text.trim())[1];
  const heading = await page.locator('.step-heading').textContent();
  await page.check(`input[name="label"][value="${label}"]`);
  await page.check('input[name="confidence"][value="4"]');
  await page.click('button.submit');
  await page.waitForFunction((h) => document.querySelector('.step-heading')?.textContent !== h, heading);
}

/** Each crowd worker's level and reasons from the pay sheet, fetched as the researcher. */
async function levels(researcher, study) {
  const r = await researcher.request.get(`${env.base}/export/pay.csv?studies=${study}`);
  assert.equal(r.status(), 200);
  const [header, ...rows] = (await r.text()).trim().split('\n').map((l) => l.match(/("([^"]|"")*"|[^,]*)(,|$)/g).map((c) => c.replace(/,$/, '').replace(/^"|"$/g, '').replace(/""/g, '"')));
  const at = (name) => header.indexOf(name);
  return Object.fromEntries(rows.map((r) => [r[at('crowd_worker_id')], [r[at('authenticity')], r[at('authenticity_reasons')]]]));
}

const signalsOf = (pid) => env.sql(`SELECT i.signals_json FROM assignment_items i JOIN assignments a ON a.id = i.assignment_id
  JOIN users u ON u.id = a.worker_id WHERE u.name = $1 ORDER BY i.position`, `prolific:${pid}`).map(([j]) => JSON.parse(j));

test('an honest worker reads, copies a word, glances away once and answers: not flagged', async () => {
  const page = await newPage(env.browser);
  await joinStudy(page, link(labels, 'honest-1'));
  assert.match(await page.locator('.instructions .recorded').textContent(), /never records what you copy or paste/);
  for (let i = 0; i < REVIEWS.length; i++) {
    await pause(2500); // reading
    if (i === 1) await copyItem(page, 2); // a word to look up, without leaving
    if (i === 2) await leave(page, 2000); // a glance at a notification
    await answerReview(page);
  }
  await page.waitForSelector('text=/completion code/i');
  assert.deepEqual(page.errors, []);
  const s = signalsOf('honest-1');
  assert.equal(s.length, 5);
  assert.deepEqual(s.map((x) => x.away_count), [0, 0, 1, 0, 0]);
  assert.ok(s[2].away_ms >= 1900 && s[2].away_ms < 10000, JSON.stringify(s[2]));
  assert.deepEqual(s.map((x) => x.copy_from_item), [0, 1, 0, 0, 0]);
  assert.ok(s.every((x) => x.wall_ms >= 2500 && x.first_input_ms !== null && x.active_ms <= x.wall_ms));
  const researcher = await newPage(env.browser);
  await signIn(researcher, env.base, USERS.researcher);
  assert.deepEqual((await levels(researcher, labels))['honest-1'], ['high', '']);
  await page.close();
  await researcher.close();
});

test('an honest worker selects spans at human speed with a short glance away: not flagged', async () => {
  const page = await newPage(env.browser);
  await joinStudy(page, link(spans, 'honest-2'));
  for (let i = 0; i < 2; i++) {
    await page.locator('.span-context').waitFor();
    await pause(3000); // reading the passage
    const question = await page.locator('.item .question').textContent();
    if (i === 0) await leave(page, 1500);
    await selectByMouse(page, question.includes('rest') ? 'Namche Bazaar' : 'Lukla');
    await page.click('button.add-answer');
    const heading = await page.locator('.step-heading').textContent();
    await page.click('button.submit');
    await page.waitForFunction((h) => document.querySelector('.step-heading')?.textContent !== h, heading);
  }
  await page.waitForSelector('text=/completion code/i');
  assert.deepEqual(page.errors, []);
  const s = signalsOf('honest-2');
  assert.deepEqual(s.map((x) => [x.away_count, x.copy_count, x.paste_count]), [[1, 0, 0], [0, 0, 0]]);
  const researcher = await newPage(env.browser);
  await signIn(researcher, env.base, USERS.researcher);
  assert.deepEqual((await levels(researcher, spans))['honest-2'], ['high', '']);
  for (const p of [page, researcher]) await p.close();
});

test('an assisted worker takes items to a chatbot in another tab and pastes its reply: flagged', async () => {
  const page = await newPage(env.browser);
  await joinStudy(page, link(labels, 'assisted-1'));
  for (let i = 0; i < REVIEWS.length; i++) {
    await pause(800);
    if (i < 2) {
      await copyItem(page);
      await leave(page, 15200);
    }
    await answerReview(page);
  }
  await page.waitForSelector('text=/completion code/i');
  const s = signalsOf('assisted-1');
  assert.ok(s[0].copy_chars >= 60 && s[0].copy_from_item === 1 && s[0].away_ms >= 15000, JSON.stringify(s[0]));
  // The free-text study: copy the question, leave, paste the reply into the answer box.
  const writer = await newPage(env.browser);
  await joinStudy(writer, link(texts, 'assisted-2'));
  for (let i = 0; i < 2; i++) {
    const box = writer.locator('textarea[name="answer"]');
    await box.waitFor();
    await copyItem(writer);
    await leave(writer, 15200);
    const reply = (await writer.locator('.context').textContent()).includes('lemon') ? 'yellow' : 'white';
    await writer.evaluate((t) => {
      const box = document.querySelector('textarea[name="answer"]');
      const data = new DataTransfer();
      data.setData('text/plain', t);
      box.focus();
      box.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
    }, reply);
    await box.fill(reply);
    const heading = await writer.locator('.step-heading').textContent();
    await writer.click('button.submit');
    await writer.waitForFunction((h) => document.querySelector('.step-heading')?.textContent !== h, heading);
  }
  await writer.waitForSelector('text=/completion code/i');
  assert.deepEqual([...page.errors, ...writer.errors], []);
  const t = signalsOf('assisted-2');
  assert.deepEqual(t.map((x) => [x.paste_count, x.paste_chars > 0]), [[1, true], [1, true]]);

  const researcher = await newPage(env.browser);
  await signIn(researcher, env.base, USERS.researcher);
  const [level, why] = (await levels(researcher, labels))['assisted-1'];
  assert.equal(level, 'low');
  assert.match(why, /2 of 5 items look assisted/);
  assert.equal((await levels(researcher, texts))['assisted-2'][0], 'low');
  // The dashboard shows each worker's signals and the tables without the flagged ones.
  await openHydrated(researcher, `${env.base}/dashboard?studies=${labels}`);
  const table = researcher.locator('#authenticity');
  await table.waitFor();
  const row = table.locator('tr', { hasText: 'assisted-1' });
  assert.match(await row.textContent(), /low/);
  assert.match(await row.textContent(), /2 \(2 from the item/);
  await researcher.locator('#exclusions').waitFor();
  assert.match(await researcher.locator('#exclusions').textContent(), /assisted-1.*low authenticity/s);
  await researcher.locator('#table5-authentic-official').waitFor();
  for (const p of [page, writer, researcher]) await p.close();
});

test('an honest fast reader answers by keyboard alone: not flagged', async () => {
  const page = await newPage(env.browser);
  await joinStudy(page, link(labels, 'keyboard-1'));
  for (let i = 0; i < REVIEWS.length; i++) {
    await pause(1800); // a fast reader
    const text = await page.locator('.context').textContent();
    const label = REVIEWS.find(([t]) => t.trim() === text.trim())[1];
    const heading = await page.locator('.step-heading').textContent();
    await answerLabelByKeys(page, label);
    await page.waitForFunction((h) => document.querySelector('.step-heading')?.textContent !== h, heading);
  }
  await page.waitForSelector('text=/completion code/i');
  assert.deepEqual(page.errors, []);
  const s = signalsOf('keyboard-1');
  assert.ok(s.every((x) => x.away_count === 0 && x.first_input_ms !== null), JSON.stringify(s));
  const researcher = await newPage(env.browser);
  await signIn(researcher, env.base, USERS.researcher);
  assert.deepEqual((await levels(researcher, labels))['keyboard-1'], ['high', '']);
  for (const p of [page, researcher]) await p.close();
});

test('an honest worker on a short study looks at another window three times and answers soon after: not flagged', async () => {
  // Music, a chat, the platform's own page: 3 of 5 items, 3 s each, the answer right after.
  const page = await newPage(env.browser);
  await joinStudy(page, link(labels, 'glances-1'));
  for (let i = 0; i < REVIEWS.length; i++) {
    await pause(2500); // reading
    if (i !== 1 && i !== 3) await beside(page, 3000);
    await answerReview(page);
  }
  await page.waitForSelector('text=/completion code/i');
  const s = signalsOf('glances-1');
  assert.deepEqual(s.map((x) => x.away_count), [1, 0, 1, 0, 1]);
  assert.ok([0, 2, 4].every((i) => s[i].hidden_ms === 0 && s[i].since_return_ms < 10000), JSON.stringify(s));
  const researcher = await newPage(env.browser);
  await signIn(researcher, env.base, USERS.researcher);
  assert.deepEqual((await levels(researcher, labels))['glances-1'], ['high', '']);
  for (const p of [page, researcher]) await p.close();
});

test('an assisted worker asks a chatbot in a window beside the page before each answer: flagged', async () => {
  const page = await newPage(env.browser);
  await joinStudy(page, link(labels, 'beside-1'));
  for (let i = 0; i < REVIEWS.length; i++) {
    await pause(1000); // skims the item
    await beside(page, 4000); // types it into the window beside, reads the reply
    await answerReview(page); // and answers at once
  }
  await page.waitForSelector('text=/completion code/i');
  assert.deepEqual(page.errors, []);
  const s = signalsOf('beside-1');
  // Away, but never hidden; the answer soon after coming back.
  assert.ok(s.every((x) => x.away_ms >= 3900 && x.hidden_ms === 0 && x.since_return_ms < 10000), JSON.stringify(s));
  const researcher = await newPage(env.browser);
  await signIn(researcher, env.base, USERS.researcher);
  const [level, why] = (await levels(researcher, labels))['beside-1'];
  assert.equal(level, 'low');
  assert.match(why, /assistance patterns on 5 of 5 items \(answers right after a window beside the page\)/);
  for (const p of [page, researcher]) await p.close();
});

test('an assisted worker carries short pieces of each item to another tab: flagged', async () => {
  const page = await newPage(env.browser);
  await joinStudy(page, link(labels, 'pieces-1'));
  for (let i = 0; i < REVIEWS.length; i++) {
    await pause(800);
    await copyItem(page, 3); // three words: under 40 characters
    await leave(page, 6000);
    await answerReview(page);
  }
  await page.waitForSelector('text=/completion code/i');
  assert.deepEqual(page.errors, []);
  const s = signalsOf('pieces-1');
  assert.ok(s.every((x) => x.copy_from_item === 1 && x.copy_chars < 40 && x.away_after_copy_ms >= 5900), JSON.stringify(s));
  const researcher = await newPage(env.browser);
  await signIn(researcher, env.base, USERS.researcher);
  const [level, why] = (await levels(researcher, labels))['pieces-1'];
  assert.equal(level, 'low');
  assert.match(why, /assistance patterns on 5 of 5 items \(item text copied then time away\)/);
  assert.doesNotMatch(why, /look assisted/);
  // The researcher finds them among the exclusions of the authentic view.
  await openHydrated(researcher, `${env.base}/dashboard?studies=${labels}`);
  await researcher.locator('#exclusions').waitFor();
  assert.match(await researcher.locator('#exclusions').textContent(), /pieces-1.*low authenticity/s);
  for (const p of [page, researcher]) await p.close();
});
