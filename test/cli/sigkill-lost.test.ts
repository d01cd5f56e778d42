import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { counts, list, status } from '../helpers/contract.js';
import { runDrover, startDrover } from '../helpers/drover.js';
import {
  isAlive,
  launchProcesses,
  readRecords,
  tempWorkspace,
  waitFor,
  writeScript,
} from '../helpers/workspace.js';

test('SIGKILL of the runner mid-launch: started tasks become lost, unstarted ones cancelled, and --unfinished reruns exactly them', async (t) => {
  const cwd = tempWorkspace(t);
  // Sleeps the seconds given, unless the file `fast` exists.
  writeScript(cwd, 'task.sh', 'if [ -f fast ]; then exit 0; fi\nsleep "$1"\n');
  const pre = await runDrover(
    [
      'prelaunch',
      '+command',
      'sh task.sh',
      '+jobname',
      'J',
      '+pos-arg',
      '0.2',
      '0.2',
      '30',
      '30',
      '30',
      '30',
    ],
    { cwd },
  );
  assert.equal(pre.code, 0, pre.stderr);

  const launch = startDrover(['launch', '--jobname', 'J', '--max-tasks', '2', '-q'], { cwd });
  t.after(() => {
    if (isAlive(launch.pid)) process.kill(launch.pid, 'SIGKILL');
  });
  await waitFor('tasks 1-2 succeeded and 3-4 running', async () => {
    const s = await status('J', { cwd });
    return s.counts.succeeded === 2 && s.counts.running === 2;
  });
  process.kill(launch.pid, 'SIGKILL');
  const ended = await launch.result;
  assert.equal(ended.signal, 'SIGKILL');

  // Lost: no process of theirs is alive (docs/concepts.md, invariant 2). Tasks 5 and 6 never started: not lost.
  const s = await status('J', { cwd });
  assert.deepEqual(launchProcesses(cwd), [], 'no task process outlives the runner once status says lost');
  assert.deepEqual(s.counts, counts({ succeeded: 2, lost: 2, cancelled: 2 }));
  assert.deepEqual(s.launches[0]!.counts, counts({ succeeded: 2, lost: 2, cancelled: 2 }));
  assert.deepEqual(
    (await list('J', { cwd })).map((x) => [x.task, x.state, x.attempts]),
    [
      [1, 'succeeded', 1],
      [2, 'succeeded', 1],
      [3, 'lost', 1],
      [4, 'lost', 1],
      [5, 'cancelled', 0],
      [6, 'cancelled', 0],
    ],
  );
  const started = readRecords(cwd).filter((r) => r.type === 'start');
  assert.deepEqual(started.map((r) => r.task).sort(), [1, 2, 3, 4]);

  fs.writeFileSync(path.join(cwd, 'fast'), '');
  const rerun = await runDrover(['launch', '--jobname', 'J', '--unfinished', '-q'], { cwd });
  assert.equal(rerun.code, 0, rerun.stderr);
  const s2 = await status('J', { cwd });
  assert.equal(s2.launches.length, 2);
  assert.equal(s2.launches[1]!.tasklist, '3-6');
  assert.deepEqual(s2.counts, counts({ succeeded: 6 }));
  assert.deepEqual(
    (await list('J', { cwd })).map((x) => [x.task, x.state, x.attempts]),
    [
      [1, 'succeeded', 1],
      [2, 'succeeded', 1],
      [3, 'succeeded', 2],
      [4, 'succeeded', 2],
      [5, 'succeeded', 1],
      [6, 'succeeded', 1],
    ],
  );
});
