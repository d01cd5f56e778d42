/**
 * `launch --signal SIG@TIME` refuses a bad value, a launch without a time limit and a time not below it (exit 2,
 * one line naming the value, nothing written); that tasks get the signal is test/runner/warn-signal.test.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runDrover } from '../helpers/drover.js';
import { snapshot, tempWorkspace } from '../helpers/workspace.js';

test('--signal refuses bad values, no limit, and a time not below the limit: exit 2, nothing written', async (t) => {
  const cwd = tempWorkspace(t);
  assert.equal((await runDrover(['prelaunch', '+command', 'true', '+jobname', 's', '+q'], { cwd })).code, 0);
  const before = snapshot(cwd);
  for (const [args, what] of [
    [['--signal', 'USR1'], /--signal 'USR1' has no '@'/],
    [['--signal', 'BOGUS@5m', '--task-timeout', '1h'], /'BOGUS' is not a signal/],
    [['--signal', 'KILL@1m', '--task-timeout', '1h'], /SIGKILL cannot be caught/],
    [
      ['--signal', 'USR1@5m'],
      /--signal USR1@5m needs a time limit to warn before: add --task-timeout or --duration/,
    ],
    [['--signal', 'USR1@5m', '--task-timeout', '5m'], /5m is not below the time limit \(--task-timeout 5m\)/],
    [['--signal', 'USR1@90', '--duration', '1m'], /90s is not below the time limit \(--duration 1m\)/],
    [
      ['--backend', 'slurm', '--signal', 'USR1@2m', '--duration', '1h', '--task-timeout', '1m'],
      /2m is not below the time limit \(--task-timeout 1m\)/,
    ],
  ] as const) {
    const r = await runDrover(['launch', 's', ...args], { cwd });
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, what);
    assert.equal(r.stderr.trimEnd().split('\n').length, 1);
    assert.deepEqual(snapshot(cwd), before);
  }
});

test('launch --help shows --signal', async (t) => {
  const r = await runDrover(['launch', '--help'], { cwd: tempWorkspace(t) });
  assert.equal(r.code, 0);
  assert.match(r.stdout, /--signal <SIG@TIME>/);
});
