import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { type RunResult, startDrover } from '../helpers/drover.js';
import { tempWorkspace } from '../helpers/workspace.js';
import { api } from '../pool/fake-worker.js';
import { poolWorkspace, startServer } from '../pool/helpers.js';

/** Run `drover server ...` in `cwd`; resolve with how it ended, or with `undefined` if it still runs after `ms`. */
async function serverThatShouldFail(
  cwd: string,
  args: string[],
  ms = 15_000,
): Promise<RunResult | undefined> {
  const p = startDrover(['server', ...args], { cwd });
  const timer = new Promise<undefined>((r) => setTimeout(() => r(undefined), ms));
  const ended = await Promise.race([p.result, timer]);
  if (ended === undefined) {
    p.child.kill('SIGKILL');
    await p.result;
  }
  return ended;
}

test('a server that cannot listen exits 2 at once, saying why, having touched nothing', {
  timeout: 120_000,
}, async (t) => {
  const { server } = await poolWorkspace(t);
  const other = tempWorkspace(t);
  const busy = await serverThatShouldFail(other, ['--port', String(server.port), '--lost-after', '1']);
  assert.ok(busy, 'the server that cannot listen is still running');
  assert.equal(busy.code, 2, busy.stderr);
  assert.match(
    busy.stderr,
    new RegExp(`cannot listen on 127\\.0\\.0\\.1:${server.port}: port ${server.port} is in use`),
  );
  assert.equal(busy.stderr.trim().split('\n').length, 1, busy.stderr);
  assert.ok(!fs.existsSync(path.join(other, '.drover')), 'nothing was created');

  const away = await serverThatShouldFail(other, ['--host', '192.0.2.1', '--port', '0']);
  assert.ok(away, 'the server on an address not of this machine is still running');
  assert.equal(away.code, 2, away.stderr);
  assert.match(away.stderr, /--host 192\.0\.2\.1 is not an address of this machine/);
  assert.ok(!fs.existsSync(path.join(other, '.drover')));
  // The first server was not disturbed.
  assert.equal((await api(server.url, 'GET', '/health', server.token)).status, 200);
});

test('only one controller acts on a ledger; a SIGKILLed one leaves no lock behind', {
  timeout: 120_000,
}, async (t) => {
  const ctx = await poolWorkspace(t);
  const { cwd } = ctx;
  // Without server.json (deleted, or two started at the same moment) the lock still refuses a second one.
  const info = path.join(cwd, '.drover', 'server', 'server.json');
  const saved = fs.readFileSync(info, 'utf8');
  fs.rmSync(info);
  const second = await serverThatShouldFail(cwd, ['--port', '0']);
  assert.ok(second, 'a second controller runs on the same ledger');
  assert.equal(second.code, 2, second.stderr);
  assert.match(second.stderr, /another drover server uses this folder's ledger/);
  assert.ok(!fs.existsSync(info), 'the refused server wrote no server.json');
  fs.writeFileSync(info, saved);
  assert.equal((await api(ctx.server.url, 'GET', '/health', ctx.server.token)).status, 200);

  ctx.server.proc.child.kill('SIGKILL');
  await ctx.server.proc.result;
  ctx.server = await startServer(cwd);
  assert.equal((await api(ctx.server.url, 'GET', '/health', ctx.server.token)).status, 200);
});

test('--host 0.0.0.0 warns and tells workers an address they can reach', { timeout: 60_000 }, async (t) => {
  const cwd = tempWorkspace(t);
  const s = await startServer(cwd, ['--host', '0.0.0.0']);
  const url = new URL(s.url);
  assert.notEqual(url.hostname, '0.0.0.0');
  assert.equal((await api(s.url, 'GET', '/health', s.token)).status, 200);
  s.proc.child.kill('SIGTERM');
  const r = await s.proc.result;
  assert.match(
    r.stderr,
    /warning: --host 0\.0\.0\.0 takes connections from other machines \(every interface\)/,
  );
  assert.match(r.stderr, new RegExp(`workers are told ${s.url.replace(/[.[\]]/g, '\\$&')}`));
});
