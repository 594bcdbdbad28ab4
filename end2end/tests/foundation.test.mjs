// The first end-to-end slice in Chromium: the page hydrates, signing in calls a server
// function, a researcher sees the demo study and previews test items, a worker is refused.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { start, newPage, signIn, staffPageRefused, USERS, RESULTS } from './server.mjs';

let env;
before(async () => { env = await start(); });
after(async () => { await env?.stop(); });

test('a researcher signs in, sees the demo tasks and previews items from the server', async () => {
  const page = await newPage(env.browser);
  await signIn(page, env.base, USERS.researcher);
  await page.waitForSelector('.user-name');
  assert.equal(await page.textContent('.user-name'), 'rita');
  assert.equal(await page.textContent('.user-role'), 'researcher');
  await page.waitForSelector('table.grid >> text=demo-MNLI');
  const rows = await page.locator('section.tasks tbody tr').count();
  assert.equal(rows, 6);

  await page.click('text=demo-MNLI');
  await page.waitForSelector('h1.task-name');
  assert.equal(await page.textContent('h1.task-name'), 'demo-MNLI');
  // The label Help opens the definition and an example.
  await page.click('details.help >> nth=0 >> summary');
  assert.match(await page.textContent('details.help >> nth=0'), /Example:/);

  // A reactive control that calls a server function: only works once hydrated.
  await page.click('button.preview-next');
  await page.waitForSelector('.item .position');
  assert.match(await page.textContent('.item .position'), /^Item 1 of 4 /);
  assert.match(await page.textContent('.item'), /Sentence 2:/);
  await page.click('button.preview-next');
  await page.waitForSelector('text=Item 2 of 4');
  await page.screenshot({ path: `${RESULTS}/task-page.png`, fullPage: true });
  assert.deepEqual(page.errors, []);

  // Signing out returns to the sign-in form.
  await page.goto(`${env.base}/`);
  await page.waitForSelector('main[data-hydrated="true"]');
  await page.click('text=Sign out');
  await page.waitForSelector('button[type="submit"]');
  await page.close();
});

test('a worker is refused the researcher catalogue', async () => {
  const page = await newPage(env.browser);
  await signIn(page, env.base, USERS.worker);
  await page.waitForSelector('[role="alert"]');
  assert.equal(await page.textContent('[role="alert"]'), 'Your role (worker) may not do this.');
  await staffPageRefused(page, `${env.base}/tasks/demo-SST-2`);
  await page.close();
});

test('a wrong password gets the one login error', async () => {
  const page = await newPage(env.browser);
  await signIn(page, env.base, { name: USERS.researcher.name, password: 'not-the-password' });
  await page.waitForSelector('[role="alert"]');
  assert.equal(await page.textContent('[role="alert"]'), 'Unknown name or wrong password.');
  // The name stays in the form for the next try; the password does not.
  assert.equal(await page.inputValue('input[name="name"]'), USERS.researcher.name);
  await signIn(page, env.base, { name: 'nobody', password: 'not-the-password' });
  await page.waitForSelector('[role="alert"]');
  assert.equal(await page.textContent('[role="alert"]'), 'Unknown name or wrong password.');
  await page.close();
});
