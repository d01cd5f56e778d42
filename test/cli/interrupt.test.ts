import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { counts, list, status } from '../helpers/contract.js';
import { runDrover, startDrover } from '../helpers/drover.js';
import { launchProcesses, readRecords, tempWorkspace, waitFor, writeScript } from '../helpers/workspace.js';

/**
 * Stopping a foreground launch: Ctrl-C (SIGINT), SIGTERM and the terminal going away (SIGHUP) cancel its
 * tasks with a message; a second signal kills them at once and still records them `cancelled`. Tasks the
 * launch never started are `cancelled` too (never `lost`), and the summary names the command that reruns them.
 */

/** Job J: `n` tasks of `sh task.sh` running `body`, or exiting 0 at once once the file `fast` exists. */
async function job(cwd: string, n: number, body: string): Promise<void> {
  writeScript(cwd, 'task.sh', `if [ -f fast ]; then exit 0; fi\n${body}\n`);
  const ids = Array.from({ length: n }, (_, i) => String(i + 1));
  const pre = await runDrover(['prelaunch', '+command', 'sh task.sh', '+jobname', 'J', '+pos-arg', ...ids], {
    cwd,
  });
  assert.equal(pre.code, 0, pre.stderr);
}

const started = (cwd: string) => readRecords(cwd).filter((r) => r.type === 'start').length;

for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  test(`${signal} to a foreground launch cancels its running and queued tasks, and --unfinished reruns them`, async (t) => {
    const cwd = tempWorkspace(t);
    await job(cwd, 4, 'sleep 30');
    const launch = startDrover(['launch', '--jobname', 'J', '--max-tasks', '2'], { cwd });
    await waitFor('two tasks running', () => started(cwd) === 2);
    process.kill(launch.pid, signal);
    const r = await launch.result;
    assert.equal(r.code, 128 + os.constants.signals[signal], r.stderr);
    assert.match(r.stderr, new RegExp(`drover: ${signal}: stopping the running tasks`));
    // stdout is a pipe here, as under nohup or a log file: SIGHUP's summary has somewhere to go.
    assert.match(r.stdout, /rerun them: drover launch --jobname J --unfinished/);
    assert.deepEqual(launchProcesses(cwd), []);
    assert.deepEqual((await status('J', { cwd })).counts, counts({ cancelled: 4 }));
    assert.deepEqual(
      (await list('J', { cwd })).map((x) => [x.task, x.state, x.attempts]),
      [
        [1, 'cancelled', 1],
        [2, 'cancelled', 1],
        [3, 'cancelled', 0],
        [4, 'cancelled', 0],
      ],
    );
    const failed = await runDrover(['launch', '--jobname', 'J', '--failed', '-q'], { cwd });
    assert.match(failed.stderr, /nothing to launch/);
    fs.writeFileSync(path.join(cwd, 'fast'), '');
    const rerun = await runDrover(['launch', '--jobname', 'J', '--unfinished', '-q'], { cwd });
    assert.equal(rerun.code, 0, rerun.stderr);
    assert.deepEqual((await status('J', { cwd })).counts, counts({ succeeded: 4 }));
  });
}

test('a second Ctrl-C kills tasks that ignore SIGTERM at once, and still records them cancelled', async (t) => {
  const cwd = tempWorkspace(t);
  // Each task says when it ignores SIGTERM: a process of the task is there from its exec, but a SIGTERM before
  // the shell has read its `trap` would end it.
  await job(cwd, 3, "trap '' TERM\ntouch ignoring.$DROVER_TASK_ID\nsleep 60");
  const launch = startDrover(['launch', '--jobname', 'J', '--max-tasks', '2', '--kill-grace', '60'], { cwd });
  await waitFor(
    'two tasks running, ignoring SIGTERM',
    () => started(cwd) === 2 && [1, 2].every((i) => fs.existsSync(path.join(cwd, `ignoring.${i}`))),
  );
  process.kill(launch.pid, 'SIGINT');
  await waitFor('the first Ctrl-C read', () => readRecords(cwd).some((r) => r.type === 'skip'));
  assert.equal(launchProcesses(cwd).length >= 2, true, 'SIGTERM did not stop them');
  const t0 = Date.now();
  process.kill(launch.pid, 'SIGINT');
  const r = await launch.result;
  assert.ok(Date.now() - t0 < 20_000, 'the second Ctrl-C did not wait for the 60 s grace');
  assert.equal(r.code, 130, r.stderr);
  assert.match(r.stderr, /killing the running tasks/);
  assert.deepEqual(launchProcesses(cwd), []);
  assert.deepEqual(
    (await list('J', { cwd })).map((x) => [x.task, x.state, x.attempts]),
    [
      [1, 'cancelled', 1],
      [2, 'cancelled', 1],
      [3, 'cancelled', 0],
    ],
  );
});
