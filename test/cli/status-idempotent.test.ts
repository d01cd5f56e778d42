import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ALL_STATES, counts, type JobStatus, list, status } from '../helpers/contract.js';
import { droverJson, runDrover } from '../helpers/drover.js';
import { isAlive, ledgerDump, tempWorkspace, waitFor } from '../helpers/workspace.js';

const N = 24;
const sum = (c: Record<string, number>) => ALL_STATES.reduce((n, s) => n + (c[s] ?? 0), 0);

test('status ingests idempotently: concurrent status calls during a detached launch never double-count', async (t) => {
  const cwd = tempWorkspace(t);
  const pre = await runDrover(
    [
      'prelaunch',
      '+command',
      'sleep',
      '+jobname',
      'J',
      '+pos-arg',
      ...Array.from({ length: N }, () => '0.1'),
      '+q',
    ],
    { cwd },
  );
  assert.equal(pre.code, 0, pre.stderr);
  const launched = await droverJson<{ pid: number }>(
    ['launch', '--jobname', 'J', '--detach', '--max-tasks', '2', '--json'],
    { cwd },
  );
  assert.equal(typeof launched.pid, 'number');

  let rounds = 0;
  let lastSucceeded = 0;
  const check = (s: JobStatus) => {
    assert.equal(s.tasks, N);
    assert.deepEqual(Object.keys(s.counts).sort(), [...ALL_STATES].sort());
    assert.equal(sum(s.counts), N, JSON.stringify(s.counts));
    assert.equal(sum(s.launches[0]!.counts), N, JSON.stringify(s.launches[0]!.counts));
    assert.ok(s.counts.running <= 2, `at most 2 running: ${JSON.stringify(s.counts)}`);
  };
  while (isAlive(launched.pid)) {
    const [a, b, tasks] = await Promise.all([status('J', { cwd }), status('J', { cwd }), list('J', { cwd })]);
    check(a);
    check(b);
    for (const x of tasks) assert.ok(x.attempts <= 1, `task ${x.task} has ${x.attempts} attempts`);
    const succeeded = Math.max(a.counts.succeeded, b.counts.succeeded);
    assert.ok(succeeded >= lastSucceeded, 'succeeded never goes down');
    lastSucceeded = succeeded;
    rounds++;
  }
  assert.ok(rounds > 0, 'status ran while the launch was running');

  const final = await waitFor('every task succeeded', async () => {
    const s = await status('J', { cwd });
    return s.counts.succeeded === N ? s : undefined;
  });
  assert.deepEqual(final.counts, counts({ succeeded: N }));
  const again = await status('J', { cwd });
  assert.deepEqual(again, final, 'a second status gives the same answer');
  assert.deepEqual(
    (await list('J', { cwd })).map((x) => [x.task, x.state, x.attempts]),
    Array.from({ length: N }, (_, i) => [i + 1, 'succeeded', 1]),
  );
  const attemptRows = (ledgerDump(cwd) ?? []).filter((row) => row.startsWith('attempts '));
  assert.equal(attemptRows.length, N, 'one attempt row per task in the ledger');
});
