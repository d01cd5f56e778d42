import assert from 'node:assert/strict';
import { test } from 'node:test';
import { counts, list, status } from '../helpers/contract.js';
import { runDrover } from '../helpers/drover.js';
import { tempWorkspace } from '../helpers/workspace.js';

/** Launch one command as job E in the foreground and return its single task as list --json shows it. */
async function runOne(cwd: string, command: string, ...flags: string[]) {
  const r = await runDrover(['launch', '--command', command, '--jobname', 'E', '-q', ...flags], { cwd });
  const [task] = await list('E', { cwd });
  return { code: r.code, stderr: r.stderr, task: task! };
}

test('--task-timeout 1 on sleep 30 ends timeout', async (t) => {
  const cwd = tempWorkspace(t);
  const { code, stderr, task } = await runOne(cwd, 'sleep 30', '--task-timeout', '1', '--kill-grace', '1');
  assert.equal(code, 1, stderr);
  assert.equal(task.state, 'timeout');
  assert.equal(task.attempts, 1);
  assert.deepEqual((await status('E', { cwd })).counts, counts({ timeout: 1 }));
});

test('a task that ignores SIGTERM past its time limit is killed after the grace and still ends timeout', async (t) => {
  const cwd = tempWorkspace(t);
  const { code, stderr, task } = await runOne(
    cwd,
    "trap '' TERM; sleep 30 & wait; sleep 30",
    '--task-timeout',
    '1',
    '--kill-grace',
    '1',
  );
  assert.equal(code, 1, stderr);
  assert.equal(task.state, 'timeout');
});

test('a task whose shell kills itself with SIGKILL ends killed', async (t) => {
  const cwd = tempWorkspace(t);
  const { code, stderr, task } = await runOne(cwd, 'kill -9 $$');
  assert.equal(code, 1, stderr);
  assert.deepEqual([task.state, task.exit_code], ['killed', null]);
});

test("sh -c 'kill -9 $$' (a task killed by a signal) ends killed, not failed with exit 137", async (t) => {
  const cwd = tempWorkspace(t);
  const { code, stderr, task } = await runOne(cwd, "sh -c 'kill -9 $$'");
  assert.equal(code, 1, stderr);
  assert.equal(task.state, 'killed', `state ${task.state}, exit code ${task.exit_code}`);
});

test('a command that cannot be executed ends failed with exit 127 and says why in its stderr log', async (t) => {
  const cwd = tempWorkspace(t);
  const { code, stderr, task } = await runOne(cwd, './no-such-program');
  assert.equal(code, 1, stderr);
  assert.deepEqual([task.state, task.exit_code], ['failed', 127]);
  const err = await runDrover(['logs', 'E', '1', '--err'], { cwd });
  assert.match(err.stdout, /no-such-program/);
});
