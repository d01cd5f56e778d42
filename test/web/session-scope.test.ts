import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { newContext, noBrowser, startBrowser, watch } from '../helpers/browser.js';
import { droverOk, runDrover } from '../helpers/drover.js';
import { startUi } from '../helpers/ui.js';
import { tempWorkspace } from '../helpers/workspace.js';
import { poolWorkspace } from '../pool/helpers.js';

/**
 * The dashboard's session is bound to its server (issue 36 §3), in a real Chromium. Cookies ignore ports: every
 * service on 127.0.0.1 receives the session cookie, and its own page may hand it to anyone. Replayed to drover
 * without the page key that only drover's page holds, it opens nothing. And `drover ui` and `drover server` on
 * one host keep a session each: logging in to one does not log out of the other.
 */

async function drover(cwd: string, args: string[]): Promise<void> {
  await droverOk(args, { cwd });
}

/** A job of one task of `command`, named `name`, made by prelaunch. */
async function oneTask(cwd: string, name: string, command: string): Promise<void> {
  await drover(cwd, ['prelaunch', '+command', command, '+jobname', name, '+q']);
}

/** Log in on a dashboard's own login page with a token; wait for its jobs. */
async function logIn(page: Page, base: string, token: string, job: string): Promise<void> {
  await page.goto(`${base}/`);
  await page.locator('[data-testid=login] input[name=token]').fill(token);
  await page.locator('[data-testid=login] button[type=submit]').click();
  await page.locator(`[data-testid=jobs] tr[data-job=${job}]`).waitFor();
}

/** The console's 401 of a page that asked who it was before it was logged in: the only error it may log. */
const BEFORE_LOGIN =
  'console error: Failed to load resource: the server responded with a status of 401 (Unauthorized)';

test('a session cookie another port receives, replayed to drover, gets 401 and cancels nothing', {
  skip: noBrowser,
  timeout: 120_000,
}, async (t) => {
  const { cwd, server } = await poolWorkspace(t);
  await oneTask(cwd, 'long', 'sleep 120');
  await drover(cwd, ['launch', 'long', '--detach']);

  const browser = await startBrowser(t);
  const errors: string[] = [];
  // One browser: its tabs share the cookie jar.
  const tabs = await newContext(browser);
  const page = watch(await tabs.newPage(), errors);
  await logIn(page, server.url, server.token, 'long');

  // Another service on this host, on a port of its own, and a page of it opened in the same browser.
  const cookies: string[] = [];
  const other = http.createServer((req, res) => {
    cookies.push(req.headers.cookie ?? '');
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>another service</title><p>another service</p>');
  });
  await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
  t.after(() => new Promise<void>((r) => other.close(() => r())));
  const otherPage = await tabs.newPage();
  await otherPage.goto(`http://127.0.0.1:${(other.address() as AddressInfo).port}/`);
  const stolen = cookies.flatMap((c) => c.split('; ')).find((c) => /^drover_session[\w-]*=/.test(c));
  assert.ok(stolen, `the browser sent drover's session cookie to the other port: ${JSON.stringify(cookies)}`);
  assert.match(stolen, new RegExp(`^drover_session_${server.port}=`), 'the cookie is named for its server');

  // Replayed to drover: neither a read nor a change (with the dashboard's change header) gets through.
  const replay = (path: string, init: RequestInit = {}) =>
    fetch(`${server.url}${path}`, { ...init, headers: { cookie: stolen, ...(init.headers ?? {}) } });
  const read = await replay('/v1/ui/jobs');
  assert.equal(read.status, 401);
  const cancel = await replay('/v1/ui/jobs/long/cancel', {
    method: 'POST',
    headers: { 'x-drover-dashboard': '1', 'content-type': 'application/json' },
    body: '{}',
  });
  assert.equal(cancel.status, 401);
  const listed = await runDrover(['list', 'long', '--json'], { cwd });
  assert.notEqual((JSON.parse(listed.stdout) as { state: string }[])[0]?.state, 'cancelled');

  // The page that logged in holds the key: it still reads, and its own cancel goes through.
  await page.goto(`${server.url}/#/jobs/long/tasks/1`);
  await page.locator('h1 [data-state=running]').waitFor({ timeout: 30_000 });
  await page.locator('[data-testid=cancel-task]').click();
  await page.locator('h1 [data-state=cancelled]').waitFor({ timeout: 30_000 });
  assert.deepEqual(errors, [BEFORE_LOGIN]);
});

test('drover ui and drover server on one host keep a login each in one browser', {
  skip: noBrowser,
  timeout: 120_000,
}, async (t) => {
  const uiCwd = tempWorkspace(t);
  await oneTask(uiCwd, 'ui-job', 'true');
  await drover(uiCwd, ['launch', 'ui-job']);
  const ui = await startUi(t, uiCwd);
  const { cwd, server } = await poolWorkspace(t);
  await oneTask(cwd, 'server-job', 'true');

  const browser = await startBrowser(t);
  const errors: string[] = [];
  const tabs = await newContext(browser);
  const uiPage = watch(await tabs.newPage(), errors);
  // drover ui by its one-time link: the page takes its key from the redirect and leaves no trace of it.
  await uiPage.goto(ui.link);
  await uiPage.locator('[data-testid=jobs] tr[data-job=ui-job]').waitFor();
  assert.equal(uiPage.url(), `${ui.base}/`, 'the page key is out of the address');
  // drover server in another tab of the same browser, by token.
  const serverErrors: string[] = [];
  const serverPage = watch(await tabs.newPage(), serverErrors);
  await logIn(serverPage, server.url, server.token, 'server-job');

  // Both still logged in.
  await uiPage.reload();
  await uiPage.locator('[data-testid=jobs] tr[data-job=ui-job]').waitFor({ timeout: 10_000 });
  await serverPage.reload();
  await serverPage.locator('[data-testid=jobs] tr[data-job=server-job]').waitFor({ timeout: 10_000 });
  // Logging out of one leaves the other logged in.
  await uiPage.locator('#logout').click();
  await uiPage.locator('[data-testid=login]').waitFor();
  await serverPage.reload();
  await serverPage.locator('[data-testid=jobs] tr[data-job=server-job]').waitFor({ timeout: 10_000 });
  assert.deepEqual(errors, []);
  assert.deepEqual(serverErrors, [BEFORE_LOGIN]);
});
