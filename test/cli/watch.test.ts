import assert from 'node:assert/strict';
import { test } from 'node:test';
import { droverJson, runDrover, startDrover } from '../helpers/drover.js';
import { tempWorkspace, waitFor, writeScript } from '../helpers/workspace.js';

/** `drover watch` stops watching on Ctrl-C and leaves the launch running (the scenarios of every backend are in test/conformance/scenarios/watch.ts). */

interface Status {
  counts: Record<string, number>;
}

test('Ctrl-C stops watching (exit 130) and the launch runs on to its end', async (t) => {
  const cwd = tempWorkspace(t);
  // Task 1 fails at once, task 2 runs on for a while.
  writeScript(cwd, 'task.sh', '[ "$1" = bad ] && exit 3\nsleep 10\n');
  const pre = await runDrover(
    ['prelaunch', '+command', 'sh task.sh', '+pos-arg', 'bad', 'ok', '+jobname', 'S', '+q'],
    { cwd },
  );
  assert.equal(pre.code, 0, pre.stderr);
  const l = await runDrover(['launch', 'S', '--detach', '-q'], { cwd });
  assert.equal(l.code, 0, l.stderr);
  const w = startDrover(['watch', 'S'], { cwd });
  // Ctrl-C once the watching has begun: it has reported task 1 (a fixed wait of 700 ms was too short under load,
  // and drover died of the signal before its handler was in place).
  let said = '';
  w.child.stderr!.on('data', (d: Buffer | string) => {
    said += String(d);
  });
  await waitFor('watch to report the failed task', () => /task 1 \(pos1=bad\) attempt 1 failed/.test(said));
  w.child.kill('SIGINT');
  const r = await w.result;
  assert.equal(r.code, 130, `signal ${r.signal}: ${r.stderr}`);
  assert.match(r.stderr, /stopped watching; launch 1 runs on/);
  const during = await droverJson<Status>(['status', 'S', '--json'], { cwd });
  assert.equal(during.counts.running, 1, 'the task still runs');
  const after = await runDrover(['watch', 'S', '-q'], { cwd });
  assert.equal(after.code, 1, after.stderr);
  assert.match(after.stdout, /succeeded +1/);
  assert.match(after.stdout, /failed +1/);
});

test('watch refuses, in one line with exit 2, a launch of another job and --launch values that are no launch', async (t) => {
  const cwd = tempWorkspace(t);
  for (const job of ['A', 'B']) {
    const pre = await runDrover(['prelaunch', '+command', 'true', '+jobname', job, '+q'], { cwd });
    assert.equal(pre.code, 0, pre.stderr);
    const l = await runDrover(['launch', job, '-q'], { cwd });
    assert.equal(l.code, 0, l.stderr);
  }
  const forged = await runDrover(['watch', 'A', '--launch', '2'], { cwd });
  assert.equal(forged.code, 2, forged.stderr);
  assert.match(forged.stderr, /^drover: --launch 2: job 'A' has no such launch: see drover status A\n$/);
  for (const bad of ['0', '-1', 'abc', '1e3', '99999999999999', '']) {
    const r = await runDrover(['watch', 'A', '--launch', bad], { cwd });
    assert.equal(r.code, 2, `--launch '${bad}': ${r.stderr}`);
    assert.equal(r.stderr.split('\n').filter(Boolean).length, 1, r.stderr);
    assert.equal(r.stdout, '');
  }
  const own = await runDrover(['watch', 'A', '--launch', '1', '-q'], { cwd });
  assert.equal(own.code, 0, own.stderr);
});

test('watch says an attempt --requeue ran again was requeued, not a plain failure', async (t) => {
  const cwd = tempWorkspace(t);
  // It checkpoints at once (exit 75) on its first attempt and succeeds on the resumed one.
  writeScript(cwd, 'task.sh', '[ "$DROVER_RESUME" = 1 ] || exit 75\necho resumed\n');
  const pre = await runDrover(
    ['prelaunch', '+command', 'sh task.sh', '+pos-arg', 'a', '+jobname', 'R', '+q'],
    {
      cwd,
    },
  );
  assert.equal(pre.code, 0, pre.stderr);
  const l = await runDrover(['launch', 'R', '--detach', '-q', '--requeue', '1', '--task-timeout', '60'], {
    cwd,
  });
  assert.equal(l.code, 0, l.stderr);
  const w = await runDrover(['watch', 'R'], { cwd });
  assert.equal(w.code, 0, w.stderr);
  assert.match(w.stderr, /task 1 \(pos1=a\) attempt 1 failed: exit 75 \(checkpointed\)[^\n]*, requeued/);
});
