// A study run on each crowd platform from its page, in Chromium, against the loopback
// stand-ins of Prolific (the live account) and MTurk (the sandbox's) (`clues-lab platform
// stand-in`): the live and the sandbox account visibly apart, a draft derived and edited, the
// publishing preview and its confirmation (a tick on the live site only), a worker arriving
// through the stand-in's link and handed back to it, the submissions read back, the approval
// and the top-up to the hourly rate, each call in the ledger, and the stand-in's own record of
// what it paid.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { start, newPage, openHydrated, signIn, writeSst, USERS } from './server.mjs';

const BIN = process.env.CLUES_BIN || `${process.env.CARGO_TARGET_DIR}/debug/clues-lab`;
let env;
let standIns;
const stand = {};
const studies = {};

/** Starts the stand-ins and reads their addresses from their first lines. */
async function startStandIns() {
  const child = spawn(BIN, ['platform', 'stand-in', '--prolific-token', 'e2e-token',
    '--mturk-access-key', 'AKIDE2E', '--mturk-secret-key', 'e2e-secret'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout });
  for await (const line of lines) {
    const m = line.match(/^(prolific|mturk) stand-in on (http:\/\/\S+)$/);
    if (m) stand[m[1]] = m[2];
    if (stand.prolific && stand.mturk) break;
  }
  return child;
}

before(async () => {
  standIns = await startStandIns();
  // The operator's accounts, pointed at the stand-ins: a file named at `serve`.
  const credentials = join(mkdtempSync(join(tmpdir(), 'clues-e2e-accounts-')), 'credentials');
  writeFileSync(credentials, [
    'PROLIFIC_TOKEN=e2e-token', `PROLIFIC_API_URL=${stand.prolific}`,
    'MTURK_ACCESS_KEY_ID=AKIDE2E', 'MTURK_SECRET_ACCESS_KEY=e2e-secret', 'MTURK_SANDBOX=1',
    `MTURK_ENDPOINT_URL=${stand.mturk}`, ''].join('\n'), { mode: 0o600 });
  env = await start((cli, dir) => {
    writeSst(join(dir, 'fixture', 'SST-2'), [
      ['a joyous ride from start to finish ', 'positive'],
      ['a slog with no payoff ', 'negative'],
    ]);
    cli('import', 'clues', join(dir, 'fixture'));
    for (const [platform, code] of [['prolific', 'PLAT-1'], ['mturk', 'HIT-1']]) {
      const made = cli('study', 'create', '--task', 'SST-2', '--name', `${platform} study`, '--scenarios', '0',
        '--annotators', '1', '--code', code, '--open');
      studies[platform] = { id: Number(made.match(/study (\d+)/)[1]), code };
    }
  }, { serveArgs: ['--platform-credentials', credentials] });
});
after(async () => {
  await env?.stop();
  standIns?.kill('SIGINT');
});

/** The ledger's calls as [action, state] pairs. */
async function ledger(page) {
  return page.$$eval('tr.call', (rows) => rows.map((r) => [r.children[1].textContent, r.children[3].textContent]));
}

/** Waits until every call of the ledger is done (the page follows them by itself). */
async function callsDone(page, n) {
  await page.waitForFunction((n) => {
    const rows = [...document.querySelectorAll('tr.call')];
    return rows.length >= n && rows.every((r) => r.classList.contains('done'));
  }, n, { timeout: 30000 });
}

/**
 * What differs between the two platforms in this flow: the account's kind, the calls that
 * publish, the worker's link on the stand-in, and where the study's end page hands back to (the
 * platform's own site, routed to the stand-in's hand-in).
 */
const PLATFORMS = {
  prolific: {
    head: /Prolific \(live\): 1 places of 1 planned, reward/,
    calls: ['group', 'create', 'publish'],
    worker: 'pe2e1',
    link: (remote, worker) => `${stand.prolific}/take/${remote}?pid=${worker}`,
    site: 'https://app.prolific.com/**',
    handBack: (route) => {
      const code = new URL(route.request().url()).searchParams.get('cc');
      route.fulfill({ status: 302, headers: { location: `${stand.prolific}/submissions/complete?cc=${code}&pid=pe2e1` } });
    },
    handedIn: async (worker, code) => worker.waitForSelector(`text=Submission handed in with the code ${code}`, { timeout: 20000 }),
  },
  mturk: {
    head: /MTurk \(sandbox\): 1 places of 1 planned, reward/,
    calls: ['group', 'create'],
    worker: 'AE2EWORKER1',
    link: (remote, worker) => `${stand.mturk}/work/${remote}?workerId=${worker}`,
    site: 'https://workersandbox.mturk.com/**',
    // The end page's form posts the HIT: a 307 keeps the POST and its fields.
    handBack: (route) => route.fulfill({ status: 307, headers: { location: `${stand.mturk}/mturk/externalSubmit` } }),
    handedIn: async (worker) => {
      await worker.click('form.mturk-submit button');
      await worker.waitForSelector('text=HIT submitted. Thank you!', { timeout: 20000 });
    },
  },
};

/** The whole study on `platform`'s stand-in, from its page. */
async function runOn(platform) {
  const on = PLATFORMS[platform];
  const { id: study, code } = studies[platform];
  const page = await newPage(env.browser);
  await signIn(page, env.base, USERS.admin);
  await openHydrated(page, `${env.base}/studies/${study}/platform`);
  // Live and sandbox apart: what each account is, and whether it works.
  assert.match(await page.textContent('li.account.live[data-platform="prolific"]'), /LIVE: real money — works: Prolific account/);
  assert.match(await page.textContent('li.account.sandbox[data-platform="mturk"]'), /sandbox: no money moves — works: MTurk sandbox account/);

  await page.selectOption('select[name="platform"]', platform);
  assert.equal(await page.inputValue('input[name="origin"]'), env.base);
  await page.click('section.draft-new button[type="submit"]');
  await page.waitForSelector('section.draft-edit');
  assert.match(await page.textContent('.publication-head'), on.head);
  await page.fill('input[name="edits[title]"]', 'Read two reviews');
  await page.click('section.draft-edit form button[type="submit"] >> text=Save the draft');
  await page.waitForSelector('text=Draft saved.');
  await page.click('text=Preview publishing');
  await page.waitForSelector('.publish-preview');
  const preview = await page.textContent('.publish-preview');
  assert.match(preview, /1 places at [\d.]+ each: [\d.]+ to the workers and [\d.]+ in fees/);
  assert.match(preview, new RegExp(`Calls: ${on.calls.join(', ')}`));
  if (platform === 'prolific') {
    assert.match(preview, /Prolific's own calculator says/);
    // The live site asks for a tick before anything is sent.
    await page.click('button.spend');
    assert.equal(await page.$$eval('tr.call', (r) => r.length), 0);
    await page.check('.live-tick input');
  } else {
    assert.equal(await page.$$eval('.live-tick', (t) => t.length), 0, 'no tick asked on the sandbox');
  }
  await page.click('button.spend');
  await callsDone(page, on.calls.length);
  // Then the first read of its submissions, which the server asks for by itself.
  assert.deepEqual((await ledger(page)).map(([a]) => a).slice(0, on.calls.length), on.calls);
  const [[remote]] = env.sql('SELECT remote_id FROM platform_studies WHERE study_id = $1', study);

  // A worker comes through the stand-in's link, answers, and is handed back to the platform
  // (its own site, routed to the stand-in).
  const context = await env.browser.newContext();
  await context.route(on.site, on.handBack);
  const worker = await newPage(env.browser, { context });
  await worker.goto(on.link(remote, on.worker));
  await worker.click('form[method="post"] button[type="submit"]');
  await worker.waitForSelector('main[data-hydrated="true"]');
  for (let i = 1; i <= 2; i++) {
    await worker.waitForSelector(`text=Test item ${i} of 2`);
    await worker.check('input[name="label"][value="positive"]');
    await worker.check('input[name="confidence"][value="4"]');
    await worker.click('button.submit');
  }
  await on.handedIn(worker, code);
  await context.close();
  // The worker took half an hour, by the server's clock.
  env.sql('UPDATE assignments SET started_at = started_at - 1800000 WHERE study_id = $1', study);

  await page.click('text=Read the submissions now');
  await page.waitForSelector('table.platform-lines tr.line.matched');
  assert.match(await page.textContent('table.platform-lines'), new RegExp(`${on.worker}\\s*submitted\\s*finished`));
  await page.click('text=Preview the decisions');
  await page.waitForSelector('tr.proposal.approve');
  await page.click('button.spend >> text=Send these 1 decisions');
  await page.waitForFunction(() => [...document.querySelectorAll('tr.call')].some((r) => r.children[1].textContent === 'approve' && r.classList.contains('done')));
  await page.click('text=Preview the top-ups');
  await page.waitForSelector('tr.top-up');
  if (await page.isVisible('text=Over the budget')) {
    await page.fill('section.top-ups input[name="budget"]', '100.00');
    await page.click('text=Set the budget');
    await page.waitForSelector('text=Budget set.');
    await page.click('text=Preview the top-ups');
    await page.waitForSelector('tr.top-up');
  }
  await page.click('button.spend >> text=Pay these 1 bonuses');
  await page.waitForFunction(() => [...document.querySelectorAll('tr.call')].some((r) => r.children[1].textContent === 'bonus' && r.classList.contains('done')));
  const paid = (await (await fetch(`${stand[platform]}/control/paid`)).json()).filter((p) => p.worker === on.worker);
  assert.deepEqual(paid.map((p) => [p.kind, p.worker]), [['reward', on.worker], ['bonus', on.worker]]);
  // Half an hour and the seconds of the answers at 12.00 an hour: 6.00 and a few cents in
  // all, the reward and the bonus together.
  const total = paid[0].cents + paid[1].cents;
  assert.ok(total >= 600 && total < 620, `${total}`);
  const csv = await page.evaluate(async (url) => (await fetch(url)).text(), `${env.base}/export/ledger.csv?studies=${study}`);
  assert.match(csv.split('\n')[0], /^id,study_id,platform,site,action,target,state/);
  assert.equal(csv.trim().split('\n').length - 1, (await ledger(page)).length);
  assert.ok(!csv.includes('e2e-token') && !csv.includes('e2e-secret'));
  assert.deepEqual(page.errors, []);
}

test('a study is published on Prolific from its page, a worker comes through its link, is approved and topped up', async () => {
  await runOn('prolific');
});

test('a study is published on MTurk\'s sandbox from its page, a worker comes through its link, is approved and topped up', async () => {
  await runOn('mturk');
});
