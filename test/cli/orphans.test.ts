import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { counts, list, status } from '../helpers/contract.js';
import { runDrover, startDrover } from '../helpers/drover.js';
import {
  isAlive,
  launchProcesses,
  readRecords,
  statFields,
  tempWorkspace,
  waitFor,
  writeScript,
} from '../helpers/workspace.js';

/**
 * A lost task is not still running (docs/concepts.md, invariant 2): whatever kills a local launch's runner — SIGKILL of
 * its whole process group included — its task processes do not outlive it, `status` never says `lost` while a
 * process of the attempt lives, and a rerun never overlaps an earlier run of the same task.
 */

/** Make job J: `command` with each of `args`. */
async function prelaunch(cwd: string, command: string, ...args: string[]): Promise<void> {
  const pre = await runDrover(['prelaunch', '+command', command, '+jobname', 'J', '+pos-arg', ...args], {
    cwd,
  });
  assert.equal(pre.code, 0, pre.stderr);
}

/** A job J of `n` tasks running `sh task.sh`: sleep 30, unless the file `fast` exists. */
async function sleepyJob(cwd: string, n: number): Promise<void> {
  writeScript(cwd, 'task.sh', 'if [ -f fast ]; then exit 0; fi\nsleep 30\n');
  await prelaunch(cwd, 'sh task.sh', ...Array.from({ length: n }, (_, i) => String(i + 1)));
}

/** How a process ended (its 'exit', not 'close': a spawn server that outlives it keeps its stderr open). */
function exited(child: ChildProcess): Promise<NodeJS.Signals | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.signalCode);
    else child.once('exit', (_code, signal) => resolve(signal));
  });
}

/** The processes whose parent (field 1 after the name in /proc/PID/stat) or process group (field 2) is `id`. */
function processesBy(field: 1 | 2, id: number): number[] {
  return fs
    .readdirSync('/proc')
    .map(Number)
    .filter((p) => Number.isInteger(p) && Number(statFields(p)?.[field]) === id);
}
const childrenOf = (parent: number) => processesBy(1, parent);

/** The runner's spawn server: its child process (in a session of its own, the leader of its process group). */
function spawnServerOf(runner: number): number | undefined {
  return childrenOf(runner)[0];
}

const started = (cwd: string) => readRecords(cwd).filter((r) => r.type === 'start').length;

for (const spawner of ['python', 'perl', 'node']) {
  test(`kill -9 of a launch's whole process group (${spawner} executor): no task outlives it, none is lost while alive, none runs twice`, async (t) => {
    const cwd = tempWorkspace(t);
    await sleepyJob(cwd, 6);
    const env = { DROVER_SPAWNER: spawner };
    const launch = startDrover(['launch', '--jobname', 'J', '--max-tasks', '4', '-q'], {
      cwd,
      env,
      setsid: true,
    });
    await waitFor('four tasks started', () => started(cwd) === 4 && launchProcesses(cwd).length >= 4);
    process.kill(-launch.pid, 'SIGKILL');
    assert.equal(await exited(launch.child), 'SIGKILL');

    const s = await status('J', { cwd });
    assert.deepEqual(launchProcesses(cwd), [], 'every task process is gone once status has looked');
    assert.deepEqual(s.counts, counts({ lost: 4, cancelled: 2 }));
    assert.deepEqual(
      (await list('J', { cwd })).map((x) => [x.task, x.state, x.attempts]),
      [
        [1, 'lost', 1],
        [2, 'lost', 1],
        [3, 'lost', 1],
        [4, 'lost', 1],
        [5, 'cancelled', 0],
        [6, 'cancelled', 0],
      ],
    );
    fs.writeFileSync(path.join(cwd, 'fast'), '');
    const rerun = await runDrover(['launch', '--jobname', 'J', '--unfinished', '-q'], { cwd, env });
    assert.equal(rerun.code, 0, rerun.stderr);
    assert.deepEqual((await status('J', { cwd })).counts, counts({ succeeded: 6 }));
  });
}

test('a task started after the runner stopped writing (no start record) is found, stopped and recorded lost', async (t) => {
  const cwd = tempWorkspace(t);
  // Task 1 ends soon; task 2 ignores SIGTERM (so only a SIGKILL stops it) and the grace is long.
  writeScript(cwd, 'one.sh', 'sleep 1\n');
  writeScript(cwd, 'two.sh', "trap '' TERM\nsleep 60\n");
  await prelaunch(cwd, 'sh', 'one.sh', 'two.sh');
  const launch = startDrover(['launch', '--jobname', 'J', '--max-tasks', '1', '--kill-grace', '60', '-q'], {
    cwd,
    setsid: true,
  });
  await waitFor('task 1 started', () => started(cwd) === 1);
  // The runner stops reading: the spawn server starts task 2 when task 1 ends, and its start is never recorded.
  process.kill(launch.pid, 'SIGSTOP');
  await waitFor('task 2 running', () => launchProcesses(cwd).some((p) => p.task === 2));
  process.kill(-launch.pid, 'SIGKILL');
  await exited(launch.child);
  assert.equal(started(cwd), 1, 'task 2 has no start record');

  const s = await status('J', { cwd });
  assert.deepEqual(launchProcesses(cwd), [], 'task 2 was stopped before it was called lost');
  assert.deepEqual(s.counts, counts({ lost: 2 }));
  assert.deepEqual(
    (await list('J', { cwd })).map((x) => [x.task, x.state, x.attempts]),
    [
      [1, 'lost', 1],
      [2, 'lost', 1],
    ],
  );
});

test('tasks whose runner and spawn server both died are stopped by their recorded pid, even with a cleared environment', async (t) => {
  const cwd = tempWorkspace(t);
  await prelaunch(cwd, 'env -i /bin/sleep', '60', '61');
  const launch = startDrover(['launch', '--jobname', 'J', '--max-tasks', '2', '-q'], { cwd, setsid: true });
  await waitFor('two tasks started', () => started(cwd) === 2);
  const pids = readRecords(cwd)
    .filter((r) => r.type === 'start')
    .map((r) => r.pid as number);
  await waitFor('both are sleep with no environment', () =>
    pids.every((p) => fs.readFileSync(`/proc/${p}/environ`).length === 0),
  );
  // The spawn server is the runner's child in its own session (with a process of its group per slot); kill the
  // server's group and the runner's, as a node's clean-up might. Both are stopped first, so they die together:
  // between two kills a loaded machine may let the survivor see the other's death and stop the tasks as it
  // should (the tests below), which is not this case.
  const server = spawnServerOf(launch.pid);
  assert.ok(server, 'the spawn server is the runner’s child');
  for (const g of [-server, -launch.pid]) process.kill(g, 'SIGSTOP');
  for (const g of [-server, -launch.pid]) process.kill(g, 'SIGKILL');
  await exited(launch.child);
  assert.ok(pids.every(isAlive), 'the tasks outlived both');

  const s = await status('J', { cwd });
  assert.ok(!pids.some(isAlive), 'status stopped them before calling them lost');
  assert.deepEqual(s.counts, counts({ lost: 2 }));
});

test('a rerun first stops what an earlier attempt of the task left running outside its process group', async (t) => {
  const cwd = tempWorkspace(t);
  // The task succeeds at once and leaves a sleep in a session of its own (out of reach of its group).
  writeScript(cwd, 'task.sh', 'setsid sleep 60 </dev/null >/dev/null 2>&1 &\nsleep 0.5\n');
  const first = await runDrover(['launch', '--command', 'sh task.sh', '--jobname', 'J', '-q'], { cwd });
  assert.equal(first.code, 0, first.stderr);
  await waitFor('the left-over sleep', () => launchProcesses(cwd).length === 1);
  const left = launchProcesses(cwd)[0]!.pid;

  const again = await runDrover(['launch', '--jobname', 'J', '--tasklist', '1', '-q'], { cwd });
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stderr, /stopped 1 process\(es\) left by earlier attempts of task 1 of 'J'/);
  assert.ok(!isAlive(left), 'the earlier attempt’s process was stopped before the rerun');
});

for (const [what, victim] of [
  ['a spawn server that dies alone', (server: number) => server],
  // The server's process for one slot (its child): the other slot's task is stopped all the same.
  ['one slot’s process of the spawn server killed alone', (server: number) => childrenOf(server)[0]!],
] as const)
  test(`${what}: the runner stops its tasks by pid and records them lost, the rest cancelled; nothing outlives the record`, async (t) => {
    const cwd = tempWorkspace(t);
    await prelaunch(cwd, 'sleep', '60', '61', '1', '1');
    const launch = startDrover(['launch', '--jobname', 'J', '--max-tasks', '2', '-q'], { cwd, setsid: true });
    t.after(() => {
      if (launch.child.exitCode === null) process.kill(-launch.pid, 'SIGKILL');
    });
    await waitFor('two tasks started', () => started(cwd) === 2);
    const pids = readRecords(cwd)
      .filter((r) => r.type === 'start')
      .map((r) => r.pid as number);
    const server = spawnServerOf(launch.pid);
    assert.ok(server, 'the spawn server is the runner’s child');
    assert.equal(childrenOf(server).length, 2, 'a process per slot');
    process.kill(victim(server), 'SIGKILL');
    const r = await launch.result;
    assert.equal(r.code, 1, r.stderr);
    assert.ok(!pids.some(isAlive), 'the runner stopped its running tasks before it recorded them');
    await waitFor('the rest of the server gone', () => processesBy(2, server).length === 0);
    const s = await status('J', { cwd });
    assert.deepEqual(s.counts, counts({ lost: 2, cancelled: 2 }));
    const tasks = await list('J', { cwd });
    assert.deepEqual(
      tasks.map((x) => [x.task, x.state, x.attempts]),
      [
        [1, 'lost', 1],
        [2, 'lost', 1],
        [3, 'cancelled', 0],
        [4, 'cancelled', 0],
      ],
      'no task that never ran has an attempt',
    );
  });
