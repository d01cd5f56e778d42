import assert from 'node:assert/strict';
import { test } from 'node:test';
import { counts, list, status } from '../helpers/contract.js';
import { lines, runDrover } from '../helpers/drover.js';
import { tempWorkspace, waitFor } from '../helpers/workspace.js';

/** A folder with job J of five `sleep 30` tasks launched detached with `maxTasks` slots, `running` of them running. */
async function detachedSleepers(t: Parameters<typeof tempWorkspace>[0], maxTasks: number): Promise<string> {
  const cwd = tempWorkspace(t);
  const pre = await runDrover(
    ['prelaunch', '+command', 'sleep', '+jobname', 'J', '+pos-arg', '30', '30', '30', '30', '30', '+q'],
    { cwd },
  );
  assert.equal(pre.code, 0, pre.stderr);
  const launch = await runDrover(
    ['launch', '--jobname', 'J', '--detach', '--max-tasks', String(maxTasks), '--kill-grace', '1'],
    { cwd },
  );
  assert.equal(launch.code, 0, launch.stderr);
  await waitFor(`${maxTasks} task(s) running`, async () => {
    const s = await status('J', { cwd });
    return s.counts.running === maxTasks && s.counts.queued === 5 - maxTasks;
  });
  return cwd;
}

test('cancel --yes records cancelled for running and queued tasks of a detached launch', async (t) => {
  const cwd = await detachedSleepers(t, 2);
  const r = await runDrover(['cancel', 'J', '--yes'], { cwd });
  assert.equal(r.code, 0, r.stderr);
  const s = await status('J', { cwd });
  assert.deepEqual(s.counts, counts({ cancelled: 5 }));
  assert.deepEqual(s.launches[0]!.counts, counts({ cancelled: 5 }));
  const tasks = await list('J', { cwd });
  assert.deepEqual(
    tasks.map((x) => [x.task, x.attempts]),
    [
      [1, 1],
      [2, 1],
      [3, 0],
      [4, 0],
      [5, 0],
    ],
  );
});

test('cancel --tasklist 1-2 --yes cancels a running and a queued task and nothing else', async (t) => {
  const cwd = await detachedSleepers(t, 1);
  const r = await runDrover(['cancel', 'J', '--tasklist', '1-2', '--yes'], { cwd });
  assert.equal(r.code, 0, r.stderr);
  // Task 3 takes the freed slot; 4-5 wait.
  await waitFor('task 3 running', async () => (await list('J', { cwd }))[2]!.state === 'running');
  const tasks = await list('J', { cwd });
  assert.deepEqual(
    tasks.map((x) => [x.task, x.state]),
    [
      [1, 'cancelled'],
      [2, 'cancelled'],
      [3, 'running'],
      [4, 'queued'],
      [5, 'queued'],
    ],
  );
  const stop = await runDrover(['cancel', 'J', '--yes'], { cwd });
  assert.equal(stop.code, 0, stop.stderr);
  assert.deepEqual((await status('J', { cwd })).counts, counts({ cancelled: 5 }));
});

test('cancel without --yes and without a terminal exits 2 with one line and cancels nothing', async (t) => {
  const cwd = await detachedSleepers(t, 2);
  const r = await runDrover(['cancel', 'J'], { cwd, input: 'y\n' });
  assert.equal(r.code, 2);
  assert.equal(lines(r.stderr).length, 1, r.stderr);
  assert.match(r.stderr, /--yes/);
  const s = await status('J', { cwd });
  assert.deepEqual(s.counts, counts({ running: 2, queued: 3 }));
  const stop = await runDrover(['cancel', 'J', '--yes'], { cwd });
  assert.equal(stop.code, 0, stop.stderr);
});
