/**
 * `drover launch J` as `status J` and `list J` take it, and the words that are not options: the job, then
 * scheduler arguments after `--`. A stray word (an unquoted value) is refused, naming it, before anything runs.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { splitOperands } from '../../src/cli/operands.js';
import { droverJson, runDrover } from '../helpers/drover.js';
import { snapshot, tempWorkspace } from '../helpers/workspace.js';

test('launch J runs the job as --jobname J does', async (t) => {
  const cwd = tempWorkspace(t);
  assert.equal(
    (
      await runDrover(
        ['prelaunch', '+command', 'true', '+jobname', 'lr', '+arg', '--x', '1', '2', '3', '+q'],
        { cwd },
      )
    ).code,
    0,
  );
  const r = await runDrover(['launch', 'lr', '--quiet'], { cwd });
  assert.equal(r.code, 0, r.stderr);
  const status = await droverJson<{ counts: Record<string, number> }>(['status', 'lr', '--json'], { cwd });
  assert.equal(status.counts.succeeded, 3);
  const same = await runDrover(['launch', 'lr', '--jobname', 'lr', '--tasklist', '2', '--quiet'], { cwd });
  assert.equal(same.code, 0, 'the job given both ways, the same, is fine');
});

test('a job and a different --jobname, or a stray word, exit 2 with one line and write nothing', async (t) => {
  const cwd = tempWorkspace(t);
  assert.equal(
    (await runDrover(['prelaunch', '+command', 'true', '+jobname', 'lr', '+arg', '--x', '1', '+q'], { cwd }))
      .code,
    0,
  );
  const before = snapshot(cwd);
  for (const [args, what] of [
    [['launch', 'lr', '--jobname', 'other'], /job 'lr' and --jobname 'other' differ/],
    [['launch', '--duration', '5', 'minutes', '--jobname', 'lr'], /job 'minutes' and --jobname 'lr' differ/],
    [['launch', 'lr', 'minutes'], /unexpected word 'minutes' after the job 'lr'.*after --/],
    [['launch', 'lr', 'a\nb'], /unexpected word 'a\\nb'/],
    [['launch', 'lr', '--', '--qos=x'], /'--qos=x' \(after --\) does not apply to --backend local/],
  ] as const) {
    const r = await runDrover(args, { cwd });
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, what);
    assert.equal(r.stderr.trimEnd().split('\n').length, 1, JSON.stringify(r.stderr));
    assert.deepEqual(snapshot(cwd), before, `${args.join(' ')} wrote nothing`);
  }
});

test('splitOperands: the job before --, everything after -- for the scheduler, even words that look like a job', () => {
  assert.deepEqual(splitOperands([], ['--jobname', 'lr']), { schedulerArgs: [] });
  assert.deepEqual(splitOperands(['lr'], ['lr', '--max-tasks', '2']), { job: 'lr', schedulerArgs: [] });
  assert.deepEqual(splitOperands(['lr', '--qos=x', 'y'], ['lr', '--', '--qos=x', 'y']), {
    job: 'lr',
    schedulerArgs: ['--qos=x', 'y'],
  });
  assert.deepEqual(splitOperands(['--qos=x'], ['--jobname', 'lr', '--', '--qos=x']), {
    schedulerArgs: ['--qos=x'],
  });
  assert.deepEqual(splitOperands(['lr', '--'], ['lr', '--', '--']), { job: 'lr', schedulerArgs: ['--'] });
  assert.throws(() => splitOperands(['a', 'b'], ['a', 'b']), /unexpected word 'b'/);
});
