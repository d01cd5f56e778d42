import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { lines, runDrover } from '../helpers/drover.js';
import { createPool, poolWorkspace } from '../pool/helpers.js';

/** Peak resident memory (MiB) of a process so far. */
function peakMib(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m![1]) / 1024;
}

/** POST to the controller's API with the user token. */
async function post(url: string, token: string, route: string, body: object) {
  const res = await fetch(`${url}/v1${route}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as { error?: { message: string } } };
}

test('the controller bounds tasklists like the CLI, and pools take sizes in the one grammar', async (t) => {
  const { cwd, server } = await poolWorkspace(t);
  const ids = Array.from({ length: 10 }, (_, i) => String(i + 1));
  const pre = await runDrover(['prelaunch', '+command', 'true', '+jobname', 'j', '+pos-arg', ...ids, '+q'], {
    cwd,
  });
  assert.equal(pre.code, 0, pre.stderr);
  // 4GiB was refused by pools (they took 4GB but not GiB): one grammar everywhere now.
  await createPool(cwd, 'p', ['--workers', '1', '--cpus', '1', '--mem', '4GiB']);
  const before = peakMib(server.proc.pid);
  for (const tasklist of ['1-1000000000', '1-20000000', '3,11']) {
    const r = await runDrover(['launch', '--pool', 'p', '--jobname', 'j', '--tasklist', tasklist], { cwd });
    assert.equal(r.code, 2, r.stderr);
    assert.equal(lines(r.stderr).length, 1, r.stderr);
    assert.match(r.stderr, /names task 1[0-9]+.* has tasks 1-10/);
    const api = await post(server.url, server.token, '/launches', { pool: 'p', cwd, jobname: 'j', tasklist });
    assert.equal(api.status, 400, JSON.stringify(api.body));
    const cancel = await post(server.url, server.token, '/jobs/j/cancel', { tasklist });
    assert.equal(cancel.status, 400, JSON.stringify(cancel.body));
    assert.match(cancel.body.error!.message, /has tasks 1-10/);
  }
  const grown = peakMib(server.proc.pid) - before;
  assert.ok(grown < 100, `the controller grew by ${grown.toFixed(0)} MiB answering refusals`);
  // A launch in range, asking memory in another spelling of the same grammar, runs.
  const ok = await runDrover(
    ['launch', '--pool', 'p', '--jobname', 'j', '--tasklist', '1-3', '--mem', '2048M', '--follow', '--json'],
    { cwd },
  );
  assert.equal(ok.code, 0, ok.stderr);
  assert.equal((JSON.parse(ok.stdout) as { counts: { succeeded: number } }).counts.succeeded, 3);
  // --num-jobs past its range is refused by the CLI, and by the API for clients that skip the CLI.
  const big = await post(server.url, server.token, '/launches', {
    pool: 'p',
    cwd,
    command: 'true',
    num_jobs: 1e9,
  });
  assert.equal(big.status, 400);
  // How logs are kept: only the two names, as the CLI's --logs (a client that skips the CLI gets a 400 naming it).
  for (const logs of ['bogus', '', 'FILES', 123, null, ['files']]) {
    const r = await post(server.url, server.token, '/launches', { pool: 'p', cwd, jobname: 'j', logs });
    assert.equal(r.status, 400, `logs ${JSON.stringify(logs)}: ${JSON.stringify(r.body)}`);
    assert.match(r.body.error!.message, /logs/);
  }
});
