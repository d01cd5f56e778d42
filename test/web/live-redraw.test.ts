import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import { newPage, noBrowser, startBrowser } from '../helpers/browser.js';
import { droverOk } from '../helpers/drover.js';
import { startUi } from '../helpers/ui.js';
import { tempWorkspace, waitFor, writeScript } from '../helpers/workspace.js';

/**
 * A live page redraws in place, in a real Chromium against a real `drover ui`: a click whose press and release
 * straddle a redraw lands on what was pressed. Had the redraw made the page anew, the pressed link would be gone
 * by the release, the browser would send the click to what the two have in common, and the user's click would be
 * lost (web/dashboard saw this: a job's link clicked while its launch changed the jobs page).
 */

async function drover(cwd: string, args: string[]): Promise<void> {
  await droverOk(args, { cwd });
}

/**
 * Press the mouse on `target`, run `change` (which makes the page redraw) and wait until `redrawn` says the page
 * shows it, then release: the element pressed is still the one on the page, and the click reaches it.
 */
async function clickAcrossRedraw(
  page: Page,
  target: Locator,
  change: () => Promise<void>,
  redrawn: () => Promise<boolean>,
): Promise<void> {
  await target.evaluate((el) => {
    (el as unknown as { pressed: boolean }).pressed = true;
  });
  const box = await target.boundingBox();
  assert.ok(box, 'the target is on the page');
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.down();
  await change();
  await waitFor('the page to redraw with the change', redrawn, 30_000, 100);
  assert.equal(
    await target.evaluate((el) => (el as unknown as { pressed?: boolean }).pressed),
    true,
    'the element pressed is still the one on the page',
  );
  await page.mouse.up();
}

test('a click pressed before a live redraw and released after it lands: jobs page, job page', {
  skip: noBrowser,
  timeout: 120_000,
}, async (t) => {
  const cwd = tempWorkspace(t);
  /** A job `name` of `command`, made by prelaunch with `words`. */
  const job = (name: string, command: string, ...words: string[]) =>
    drover(cwd, ['prelaunch', '+command', command, '+jobname', name, ...words, '+q']);
  await job('a', 'true');
  await job('b', 'true');
  await job('c', 'sh wait.sh', '+arg', '--k', '1', '2', '3');
  const ui = await startUi(t, cwd);
  const browser = await startBrowser(t);
  const errors: string[] = [];
  const page = await newPage(browser, errors);
  await page.goto(ui.link);
  const rowB = page.locator('[data-testid=jobs] tr[data-job=b]');
  await rowB.waitFor();

  // The jobs page: press on job a's link while job b's launch changes b's row.
  await clickAcrossRedraw(
    page,
    page.locator('[data-testid=jobs] tr[data-job=a] a'),
    () => drover(cwd, ['launch', 'b']),
    async () => /succeeded 1/.test((await rowB.textContent()) ?? ''),
  );
  await page.locator('h1', { hasText: 'Job a' }).waitFor({ timeout: 10_000 });
  assert.equal(new URL(page.url()).hash, '#/jobs/a');

  // A job's page while its launch runs (task 1 ended, so its charts are there and nothing moves): press on task
  // 1's link while tasks 2 and 3 end, which changes the page's counts, charts and the other rows of its table.
  writeScript(cwd, 'wait.sh', '[ "$2" = 1 ] || while [ ! -e go ]; do sleep 0.05; done\n');
  await drover(cwd, ['launch', 'c', '--detach']);
  await page.goto(`${ui.base}/#/jobs/c`);
  await page.locator('[data-testid=histogram] canvas').first().waitFor();
  const states = page.locator('[data-testid=tasks] tbody [data-state]');
  await waitFor(
    'the table to show task 1 ended, 2 and 3 running',
    async () => (await states.allTextContents()).join() === 'succeeded,running,running',
    30_000,
    100,
  );
  await clickAcrossRedraw(
    page,
    page.locator('[data-testid=tasks] tr[data-task="1"] a'),
    async () => fs.writeFileSync(path.join(cwd, 'go'), ''),
    async () => (await states.allTextContents()).join() === 'succeeded,succeeded,succeeded',
  );
  await page.locator('[data-testid=attempts]').waitFor({ timeout: 10_000 });
  assert.equal(new URL(page.url()).hash, '#/jobs/c/tasks/1');
  assert.deepEqual(errors, []);
});
