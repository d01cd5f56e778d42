import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { runDrover } from '../helpers/drover.js';
import { loginByToken } from '../helpers/ui.js';
import { waitFor, writeScript } from '../helpers/workspace.js';
import { poolWorkspace } from '../pool/helpers.js';

test('dashboard: rerun failed of a pool launch runs on the pool with the launch’s settings, not the defaults', {
  timeout: 120_000,
}, async (t) => {
  const { cwd, server } = await poolWorkspace(t);
  writeScript(cwd, 'w.sh', 'if [ "$2" = 2 ]; then exit 1; fi\n');
  const pre = await runDrover(
    ['prelaunch', '+command', 'bash w.sh', '+jobname', 'j', '+arg', '--n', '1', '2', '3', '+q'],
    { cwd },
  );
  assert.equal(pre.code, 0, pre.stderr);
  const pool = await runDrover(['pool', 'create', 'p', '--workers', '1', '--slots', '2'], { cwd });
  assert.equal(pool.code, 0, pool.stderr);
  const settings = ['--task-timeout', '30', '--retries', '1', '--requeue', '1', '--signal', 'USR1@5'];
  const first = await runDrover(['launch', 'j', '--pool', 'p', ...settings, '--follow'], { cwd });
  assert.equal(first.code, 1, first.stderr);

  writeScript(cwd, 'w.sh', 'exit 0\n');
  const session = await loginByToken(server.url, server.token);
  const res = await fetch(`${server.url}/v1/ui/jobs/j/rerun-failed`, {
    method: 'POST',
    headers: { ...session, 'x-drover-dashboard': '1' },
  });
  const body = (await res.json()) as { tasklist?: string; launch?: string; pool?: string };
  assert.equal(res.status, 200, JSON.stringify(body));
  assert.deepEqual([body.tasklist, body.pool], ['2', 'p']);
  const db = new Database(path.join(cwd, '.drover', 'ledger.db'), { readonly: true });
  const id = Number(body.launch);
  const row = db.prepare('SELECT backend, options FROM launches WHERE id = ?').get(id) as {
    backend: string;
    options: string;
  };
  const onPool = db.prepare('SELECT retries, settings FROM pool_launches WHERE launch_id = ?').get(id) as {
    retries: number;
    settings: string;
  };
  db.close();
  const options = JSON.parse(row.options) as Record<string, unknown>;
  assert.equal(row.backend, 'pool:p');
  assert.deepEqual(
    [options.taskTimeout, options.retries, options.requeue, options.signal],
    [30, 1, 1, 'USR1@5s'],
  );
  // What the pool's workers run it with: the same limits, retries and requeues.
  const run = JSON.parse(onPool.settings) as { taskTimeout?: number; requeue?: number };
  assert.deepEqual([onPool.retries, run.taskTimeout, run.requeue], [1, 30, 1]);
  await waitFor(
    'the rerun to end',
    async () => {
      const s = (await (await fetch(`${server.url}/v1/ui/jobs/j`, { headers: session })).json()) as {
        counts: Record<string, number>;
      };
      return s.counts.succeeded === 3;
    },
    30_000,
    200,
  );
});
