import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { writeElementRunner } from '../../../src/backends/slurm/element-script.js';
import { childEnv, droverBin } from '../../helpers/drover.js';
import { waitFor } from '../../helpers/workspace.js';
import { makeLaunch } from '../../runner/runner-harness.js';
import { RUNNERS } from '../../runner/runners.js';

/**
 * What only Slurm's element runners do (the runner conformance suite, test/runner/conformance.test.ts, runs them
 * through every scenario every runner passes): which of the two a packed element runs, and how an element finds
 * its tasks in the task table.
 */

const packed = RUNNERS.filter((r) => r.name.endsWith('runner, packed'));

for (const impl of packed) {
  const runner = impl.name.startsWith('python') ? 'python' : 'bash';
  test(`packed (${runner}): the element runs the runner asked for, in the bash process the wrapper started`, {
    skip: impl.skip,
  }, async (t) => {
    const l = makeLaunch(t, { commands: ['sleep 30', 'sleep 30'] });
    const [e] = impl.prepare(l);
    const child = spawn(e!.argv[0]!, e!.argv.slice(1), { cwd: l.dir, env: e!.env, stdio: 'ignore' });
    const exited = new Promise((resolve) => child.once('close', resolve));
    await waitFor('a task started', () => fs.readdirSync(l.settings.recordsDir).length > 0);
    // The Python runner replaces the bash process that starts it (exec): the element's pid stays the same.
    assert.match(fs.readlinkSync(`/proc/${child.pid}/exe`), runner === 'python' ? /python/ : /bash/);
    child.kill('SIGTERM');
    await exited;
  });
}

test('one task per element: element K runs task K, also in a launch of scattered tasks (--tasklist 2,5)', async (t) => {
  const l = makeLaunch(t, { commands: [] });
  l.tasks = [
    { id: 2, command: 'echo two', attempt: 1 },
    { id: 5, command: 'echo five', attempt: 3 },
  ];
  const script = writeElementRunner(l.launchDir, {
    settings: l.settings,
    tasks: l.tasks,
    tasksPerNode: 1,
    node: process.execPath,
    bin: droverBin,
  });
  assert.equal(
    fs.readFileSync(path.join(l.launchDir, 'slurm-tasks.txt'), 'utf8').split('\n')[4],
    "3 5 D $'echo' $'five'",
  );
  for (const key of ['5', '2']) {
    const child = spawn('/bin/bash', [script, 'runner', '-', '--group', key], {
      cwd: l.dir,
      env: childEnv(),
    });
    assert.equal(await new Promise((resolve) => child.once('close', resolve)), 0);
  }
  const log = (name: string) => fs.readFileSync(path.join(l.settings.logDir, name), 'utf8');
  assert.deepEqual([log('2.1.out'), log('5.3.out')], ['two\n', 'five\n']);
  const starts = fs
    .readdirSync(l.settings.recordsDir)
    .flatMap((f) => fs.readFileSync(path.join(l.settings.recordsDir, f), 'utf8').trim().split('\n'))
    .map((line) => JSON.parse(line) as { type: string; task: number; attempt: number })
    .filter((r) => r.type === 'start');
  assert.deepEqual(starts.map((r) => [r.task, r.attempt]).sort(), [
    [2, 1],
    [5, 3],
  ]);
});

test('packed elements: group K is the K-th run of N tasks in launch order', async (t) => {
  const l = makeLaunch(t, { commands: ['echo 1', 'echo 2', 'echo 3', 'echo 4', 'echo 5'] });
  const script = writeElementRunner(l.launchDir, {
    settings: l.settings,
    tasks: l.tasks,
    tasksPerNode: 2,
    node: process.execPath,
    bin: droverBin,
  });
  const child = spawn('/bin/bash', [script, 'runner', '-', '--group', '3'], { cwd: l.dir, env: childEnv() });
  assert.equal(await new Promise((resolve) => child.once('close', resolve)), 0);
  assert.deepEqual(fs.readdirSync(l.settings.logDir).sort(), ['5.1.err', '5.1.out']);
});
