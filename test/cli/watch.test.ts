import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
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

test('watch --json prints the status object at once and at each change, one line each, the last its end', async (t) => {
  const cwd = tempWorkspace(t);
  // Task 1 fails at once; task 2 waits for the test's go, so the watcher sees it running first.
  writeScript(cwd, 'task.sh', '[ "$1" = bad ] && exit 3\nwhile [ ! -e go ]; do sleep 0.1; done\n');
  const pre = await runDrover(
    ['prelaunch', '+command', 'sh task.sh', '+pos-arg', 'bad', 'ok', '+jobname', 'J', '+q'],
    { cwd },
  );
  assert.equal(pre.code, 0, pre.stderr);
  const l = await runDrover(['launch', 'J', '--detach', '-q'], { cwd });
  assert.equal(l.code, 0, l.stderr);
  const w = startDrover(['watch', 'J', '--json', '--interval', '0.2'], { cwd });
  let out = '';
  w.child.stdout!.on('data', (d: Buffer | string) => {
    out += String(d);
  });
  const seen = () =>
    out
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Status);
  await waitFor('a status with task 2 running', () => seen().some((s) => s.counts.running === 1));
  writeFileSync(path.join(cwd, 'go'), '');
  const r = await w.result;
  assert.equal(r.code, 1, `one task failed: ${r.stderr}`);
  assert.equal(r.stderr, '');
  const lines = r.stdout.split('\n');
  assert.equal(lines.pop(), '', 'every line ends');
  // Each line a change: no two in a row alike.
  for (let i = 1; i < lines.length; i++) assert.notEqual(lines[i], lines[i - 1], `line ${i + 1} repeats`);
  // The last is the status at the end, as `drover status --json` prints it.
  const now = await runDrover(['status', 'J', '--json'], { cwd });
  assert.deepEqual(JSON.parse(lines.at(-1)!), JSON.parse(now.stdout));
  const end = JSON.parse(lines.at(-1)!) as Status;
  assert.deepEqual([end.counts.succeeded, end.counts.failed, end.counts.running], [1, 1, 0]);
  // A launch that has ended: its status once, and the exit code at once.
  const again = await runDrover(['watch', 'J', '--json'], { cwd });
  assert.equal(again.code, 1, again.stderr);
  assert.deepEqual(
    again.stdout
      .split('\n')
      .filter(Boolean)
      .map((x) => JSON.parse(x)),
    [JSON.parse(now.stdout)],
  );
});

test('watch --json refuses what watch refuses, and --interval values out of range, in one line with exit 2', async (t) => {
  const cwd = tempWorkspace(t);
  for (const job of ['N', 'D']) {
    const pre = await runDrover(['prelaunch', '+command', 'true', '+jobname', job, '+q'], { cwd });
    assert.equal(pre.code, 0, pre.stderr);
  }
  // D has a launch (ended): what is refused of it is the interval alone.
  const l = await runDrover(['launch', 'D', '-q'], { cwd });
  assert.equal(l.code, 0, l.stderr);
  const intervals = ['0', '0.01', '-1', 'abc', '1e3', '3601', '', '1;rm -rf /'];
  for (const args of [
    ['watch', 'N', '--json'], // no launch yet
    ['watch', 'nosuch', '--json'],
    ['watch', '../N', '--json'],
    ['watch', 'N\n', '--json'],
    ['watch', 'D', '--json', '--launch', '7'],
    ['watch', 'D', '--json=yes'],
    ...intervals.map((v) => ['watch', 'D', '--json', '--interval', v]),
  ]) {
    const r = await runDrover(args, { cwd });
    assert.equal(r.code, 2, `${JSON.stringify(args)}: ${r.stderr}`);
    assert.equal(r.stdout, '', JSON.stringify(args));
    assert.equal(r.stderr.split('\n').filter(Boolean).length, 1, `${JSON.stringify(args)}: ${r.stderr}`);
    if (args.includes('--interval')) assert.match(r.stderr, /--interval/, r.stderr);
  }
  const ok = await runDrover(['watch', 'D', '--json', '--interval', '0.1'], { cwd });
  assert.equal(ok.code, 0, ok.stderr);
});
