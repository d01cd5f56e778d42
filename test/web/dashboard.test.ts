import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { newPage, noBrowser, pixelStats, startBrowser } from '../helpers/browser.js';
import { droverOk } from '../helpers/drover.js';
import { waitFor, writeScript } from '../helpers/workspace.js';
import { createPool, poolWorkspace } from '../pool/helpers.js';

/**
 * The dashboard in a real headless Chromium against a real `drover server` (issue 13's Done-when): log in with a
 * token, watch a job's counts change while its launch runs without a reload, filter to failed tasks, read a failed
 * task's stderr tail, cancel a running task and see it cancelled, see a pool's workers. Each page is
 * screenshotted into the test's folder and checked not to be blank.
 */

async function drover(cwd: string, args: string[]): Promise<string> {
  return await droverOk(args, { cwd });
}

/** The number a page's count chip shows for a state (0 when it shows none). */
async function shownCount(page: Page, state: string): Promise<number> {
  const chip = page.locator(`[data-testid=counts] [data-count=${state}] b`);
  return (await chip.count()) === 0 ? 0 : Number(await chip.textContent());
}

async function screenshot(browser: Browser, page: Page, dir: string, name: string): Promise<void> {
  const file = path.join(dir, `${name}.png`);
  const png = await page.screenshot({ path: file, fullPage: true });
  assert.ok(fs.statSync(file).size > 0, `${file} was written`);
  const s = await pixelStats(browser, png);
  // A blank page is one colour; a drawn one has text, badges and charts in many.
  assert.ok(s.colours >= 20 && s.inked > 0.01, `${name} screenshot looks blank: ${JSON.stringify(s)}`);
}

test('dashboard: log in, live counts, failed filter, stderr tail, cancel a running task, pool workers', {
  skip: noBrowser,
  timeout: 180_000,
}, async (t) => {
  const { cwd, server } = await poolWorkspace(t);
  const shots = path.join(cwd, 'screenshots');
  fs.mkdirSync(shots);
  writeScript(
    cwd,
    'work.sh',
    'k="$2"; sleep 1.2; if [ "$k" = 3 ] || [ "$k" = 6 ]; then echo "boom on k=$k" >&2; exit 4; fi; echo "done $k"\n',
  );
  await drover(cwd, [
    'prelaunch',
    '+command',
    'bash work.sh',
    '+jobname',
    'sweep',
    '+arg',
    '--k',
    '1',
    '2',
    '3',
    '4',
    '5',
    '6',
    '7',
    '8',
    '+q',
  ]);
  await drover(cwd, ['prelaunch', '+command', 'sleep 120', '+jobname', 'long', '+q']);
  // A command that looks like markup: the pages show it as text.
  await drover(cwd, [
    'prelaunch',
    '+command',
    'echo "<img src=x onerror=window.__xss=1><b>bold</b>"',
    '+jobname',
    'markup',
    '+q',
  ]);

  const browser = await startBrowser(t);
  const errors: string[] = [];
  const page = await newPage(browser, errors);

  // Log in with the server's user token on the login page.
  await page.goto(`${server.url}/`);
  await page.locator('[data-testid=login] input[name=token]').fill(server.token);
  await page.locator('[data-testid=login] button[type=submit]').click();
  await page.locator('[data-testid=jobs] tr[data-job=sweep]').waitFor();
  // The page asked who it was before logging in: the browser logs that 401 as an error, and it is the only one.
  assert.deepEqual(errors, [
    'console error: Failed to load resource: the server responded with a status of 401 (Unauthorized)',
  ]);
  errors.length = 0;
  await screenshot(browser, page, shots, 'jobs');

  // Open the job while its launch runs: its counts change on the page, with no reload.
  await drover(cwd, ['launch', 'sweep', '--max-tasks', '2', '--detach']);
  await page.locator('a[href="#/jobs/sweep"]').click();
  // Should the rows not come, say what the page shows instead and what the browser logged.
  await page
    .locator('[data-testid=tasks] tr[data-task]')
    .first()
    .waitFor()
    .catch(async (err: Error) => {
      const shown = await page
        .locator('body')
        .textContent()
        .catch(() => '(no body)');
      throw new Error(
        `${err.message}\nthe page shows: ${(shown ?? '').slice(0, 2000)}\nlogged: ${errors.join('\n')}`,
      );
    });
  await page.evaluate('window.__sameDocument = true');
  const first = (await shownCount(page, 'succeeded')) + (await shownCount(page, 'failed'));
  assert.ok(first < 8, `the page opened while the launch ran (${first} of 8 ended)`);
  await waitFor(
    'the page to show all 8 ended',
    async () => (await shownCount(page, 'succeeded')) === 6 && (await shownCount(page, 'failed')) === 2,
    60_000,
    200,
  );
  assert.equal(await page.evaluate('window.__sameDocument'), true, 'the counts changed without a reload');
  // The detached runner ingests its own records, so the counts can be final before the launch is closed: the
  // server's next refresh closes it (a change the page is told of). Wait for that too, so nothing changes below.
  await waitFor(
    'the page to show the launch closed',
    async () => {
      const open = await page.locator('[data-testid=launches] tbody tr td:last-child').allTextContents();
      return open.length === 1 && open[0] === '';
    },
    60_000,
    200,
  );
  await page.locator('[data-testid=timeline] canvas').first().waitFor();
  await screenshot(browser, page, shots, 'job');

  // Opened with nothing changing, the job page asks for each thing once: its stream, the job, a page of its tasks
  // (the stream's 'ready' draws it; navigating does not draw it again).
  const asked: string[] = [];
  const onRequest = (r: { url(): string }) => {
    const u = new URL(r.url());
    if (u.pathname.startsWith('/v1/ui/')) asked.push(u.pathname);
  };
  page.on('request', onRequest);
  await page.reload();
  await page.locator('[data-testid=tasks] tr[data-task]').first().waitFor();
  await new Promise((r) => setTimeout(r, 1500));
  page.off('request', onRequest);
  const times = (p: string) => asked.filter((a) => a === p).length;
  assert.equal(times('/v1/ui/events'), 1, asked.join(' '));
  assert.equal(times('/v1/ui/jobs/sweep'), 1, asked.join(' '));
  assert.equal(times('/v1/ui/jobs/sweep/tasks'), 1, asked.join(' '));

  // Filter to failed tasks: only tasks 3 and 6.
  await page.locator('[data-testid=filter-state]').selectOption({ label: 'failed (any bad end)' });
  await waitFor(
    'the failed filter',
    async () => (await page.locator('[data-testid=pager]').textContent()) === '1–2 of 2',
    10_000,
    100,
  );
  const ids = await page
    .locator('[data-testid=tasks] tbody tr')
    .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-task')));
  assert.deepEqual(ids, ['3', '6']);
  const states = await page.locator('[data-testid=tasks] tbody [data-state]').allTextContents();
  assert.deepEqual(states, ['failed', 'failed']);
  // A click on the task column's head sorts by it the other way (it was sorted by id, up).
  await page.locator('[data-testid=tasks] th[data-sort=id]').click();
  await page.locator('[data-testid=tasks] th[data-sort=id].sorted.desc').waitFor();
  await waitFor(
    'the table sorted by task, down',
    async () =>
      (await page.locator('[data-testid=tasks] tbody tr').first().getAttribute('data-task')) === '6',
    10_000,
    100,
  );

  // Open one: its stderr tail is there.
  await page.locator('[data-testid=tasks] tr[data-task="6"] a').click();
  await page.locator('[data-testid=log-stderr] pre').waitFor();
  assert.match((await page.locator('[data-testid=log-stderr] pre').textContent()) ?? '', /boom on k=6/);
  await screenshot(browser, page, shots, 'task');

  // Cancel a running task from its page: it ends cancelled, and the page says so.
  await drover(cwd, ['launch', 'long', '--detach']);
  await page.goto(`${server.url}/#/jobs/long/tasks/1`);
  await page.locator('h1 [data-state=running]').waitFor({ timeout: 30_000 });
  await page.locator('[data-testid=cancel-task]').click();
  await page.locator('h1 [data-state=cancelled]').waitFor({ timeout: 30_000 });
  const listed = JSON.parse(await drover(cwd, ['list', 'long', '--json'])) as { state: string }[];
  assert.equal(listed[0]?.state, 'cancelled');

  // The markup job's command is text on its task page: no element made of it, no script run.
  await page.goto(`${server.url}/#/jobs/markup/tasks/1`);
  await page.locator('[data-testid=attempts]').waitFor();
  assert.match(
    (await page.locator('dl.kv dd').first().textContent()) ?? '',
    /<img src=x onerror=window.__xss=1><b>bold<\/b>/,
  );
  assert.equal(await page.locator('dl.kv img, dl.kv b').count(), 0);
  assert.equal(await page.evaluate('window.__xss'), undefined);
  // And in the job's task table (a data table's cells take text too).
  await page.goto(`${server.url}/#/jobs/markup`);
  await page.locator('[data-testid=tasks] td.cmd').first().waitFor();
  assert.match(
    (await page.locator('[data-testid=tasks] td.cmd').first().textContent()) ?? '',
    /<img src=x onerror=window.__xss=1><b>bold<\/b>/,
  );
  assert.equal(await page.locator('[data-testid=tasks] img, [data-testid=tasks] b').count(), 0);
  assert.equal(await page.evaluate('window.__xss'), undefined);

  // A pool and its workers.
  await createPool(cwd, 'p', ['--workers', '2', '--cpus', '1']);
  await page.goto(`${server.url}/#/pools`);
  await page.locator('[data-pool=p] [data-testid=workers] tr[data-worker]').nth(1).waitFor();
  const workerStates = await page
    .locator('[data-pool=p] [data-testid=workers] tbody tr td:nth-child(4)')
    .allTextContents();
  assert.deepEqual(workerStates, ['ready', 'ready']);
  assert.match(
    (await page.locator('[data-pool=p] [data-testid=workers-live]').textContent()) ?? '',
    /^2 live of 2 wanted/,
  );
  await screenshot(browser, page, shots, 'pools');

  assert.deepEqual(errors, []);
  for (const name of ['jobs', 'job', 'task', 'pools'])
    assert.ok(fs.existsSync(path.join(shots, `${name}.png`)));
});
