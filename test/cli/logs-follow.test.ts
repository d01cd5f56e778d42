import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { droverJson, runDrover, startDrover } from '../helpers/drover.js';
import { scriptJob } from '../helpers/script-job.js';
import { isAlive, launchProcesses, waitFor } from '../helpers/workspace.js';

/**
 * `drover logs J T --follow` (issue 13 §4): a task still queued is waited for, then followed; a task retried is
 * followed attempt after attempt until it ends; `--attempt` pins one. Launches are detached, as a user watching
 * a background launch has them.
 */

function job(t: Parameters<typeof scriptJob>[0], script: string, args: string[]): Promise<string> {
  return scriptJob(t, script, 'F', args);
}

async function settled(cwd: string): Promise<void> {
  await waitFor(
    'the launch to end',
    async () => {
      const s = await droverJson<{ counts: Record<string, number> }>(['status', 'F', '--json'], { cwd });
      return s.counts.queued === 0 && s.counts.running === 0;
    },
    30_000,
    200,
  );
}

test('logs --follow of a queued task waits for it to start, then prints all it writes', async (t) => {
  // Task 1 holds the only slot until the test makes the file `go` (30 s at most); task 2 is queued behind it.
  const cwd = await job(
    t,
    'i=0; while [ "$1" = 1 ] && [ ! -e go ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done\n' +
      'echo "out of $1"; sleep 0.3; echo "done $1"\n',
    ['1', '2'],
  );
  const l = await runDrover(['launch', 'F', '--max-tasks', '1', '--detach', '-q'], { cwd });
  assert.equal(l.code, 0, l.stderr);
  const follower = startDrover(['logs', 'F', '2', '--follow'], { cwd });
  t.after(() => {
    if (isAlive(follower.pid)) follower.child.kill('SIGKILL');
  });
  let waiting = '';
  follower.child.stderr!.on('data', (d: string) => {
    waiting += d;
  });
  await waitFor('the follower to wait for task 2', () => /is queued/.test(waiting));
  fs.writeFileSync(path.join(cwd, 'go'), '');
  const r = await follower.result;
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'out of 2\ndone 2\n');
  assert.match(r.stderr, /task 2 of 'F' is queued: waiting for it to start/);
  await settled(cwd);
  // Without --follow the same task prints what it wrote, and no waiting.
  const again = await runDrover(['logs', 'F', '2'], { cwd });
  assert.equal(again.stdout, 'out of 2\ndone 2\n');
  assert.equal(again.stderr, '');
});

test('logs --follow follows each retry in turn until the task ends; --attempt pins one', async (t) => {
  // Attempt 1 waits (up to 30 s) for the file `go`, which the test makes once the follower has printed its
  // output: a follower that starts after attempt 1 ended begins, rightly, with the attempt then running.
  const cwd = await job(
    t,
    'echo "try $DROVER_ATTEMPT" >&2\n' +
      'i=0; while [ "$DROVER_ATTEMPT" = 1 ] && [ ! -e go ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done\n' +
      'sleep 0.2; [ "$DROVER_ATTEMPT" -ge 3 ] || exit 4\n',
    ['x'],
  );
  const follow = startDrover(['logs', 'F', '1', '--follow', '--err'], { cwd });
  // Started before the launch: the task is pending (never launched), so there is nothing to follow yet.
  const early = await follow.result;
  assert.equal(early.code, 2, early.stderr);
  assert.match(early.stderr, /task 1 of 'F' has no attempt yet/);
  const l = await runDrover(['launch', 'F', '--retries', '2', '--retry-delay', '0.3', '--detach', '-q'], {
    cwd,
  });
  assert.equal(l.code, 0, l.stderr);
  const following = startDrover(['logs', 'F', '1', '--follow', '--err'], { cwd });
  t.after(() => {
    if (isAlive(following.pid)) following.child.kill('SIGKILL');
  });
  let first = '';
  following.child.stdout!.on('data', (d: string) => {
    first += d;
  });
  await waitFor('the follower to print attempt 1', () => first.includes('try 1'));
  fs.writeFileSync(path.join(cwd, 'go'), '');
  const r = await following.result;
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'try 1\ntry 2\ntry 3\n', 'every attempt, in order, each whole');
  assert.match(r.stderr, /attempt 2 started \(a retry\)/);
  assert.match(r.stderr, /attempt 3 started \(a retry\)/);
  await settled(cwd);
  const two = await runDrover(['logs', 'F', '1', '--follow', '--err', '--attempt', '2'], { cwd });
  assert.equal(two.code, 0, two.stderr);
  assert.equal(two.stdout, 'try 2\n');
});

test('logs --follow of a task whose runner is SIGKILLed ends saying it is lost, exit 1; a queued one says it never started', {
  timeout: 120_000,
}, async (t) => {
  // Task 1 prints and sleeps long, holding the only slot; task 2 is queued behind it.
  const cwd = await job(t, 'echo "start $1"; sleep 60; echo "end $1"\n', ['1', '2']);
  const l = await runDrover(['launch', 'F', '--max-tasks', '1', '--detach', '--json'], { cwd });
  assert.equal(l.code, 0, l.stderr);
  const runner = (JSON.parse(l.stdout) as { pid: number }).pid;
  const running = startDrover(['logs', 'F', '1', '--follow'], { cwd });
  const queued = startDrover(['logs', 'F', '2', '--follow'], { cwd });
  t.after(() => {
    for (const p of [running, queued]) if (isAlive(p.pid)) p.child.kill('SIGKILL');
  });
  let out = '';
  let waiting = '';
  running.child.stdout!.on('data', (d: string) => {
    out += d;
  });
  queued.child.stderr!.on('data', (d: string) => {
    waiting += d;
  });
  await waitFor(
    'task 1 to print and task 2 to be waited for',
    () => out.includes('start 1') && /task 2 of 'F' is queued/.test(waiting),
  );
  process.kill(runner, 'SIGKILL');
  const [one, two] = await Promise.all([running.result, queued.result]);
  assert.equal(one.code, 1, one.stderr);
  assert.equal(one.stdout, 'start 1\n');
  assert.match(
    one.stderr,
    // Started right after the detached launch, the follower may see task 1 still queued first, and says so.
    new RegExp(
      `^(drover: task 1 of 'F' is queued: waiting for it to start \\(Ctrl-C stops waiting\\)\n)?drover: task 1 of 'F' attempt 1 is lost \\(runner process ${runner} ended without a record of it\\): its output above is all it left; rerun it with drover launch F --tasklist 1\n$`,
    ),
  );
  assert.equal(two.code, 1, two.stderr);
  assert.equal(two.stdout, '');
  assert.match(
    two.stderr,
    /\ndrover: task 2 of 'F' ended cancelled without starting: see drover status F\n$/,
  );
  assert.deepEqual(launchProcesses(cwd), [], 'no process of the launch is left');
  // Followed after the fact, the lost attempt says so the same way.
  const later = await runDrover(['logs', 'F', '1', '--follow'], { cwd });
  assert.equal(later.code, 1, later.stderr);
  assert.equal(later.stdout, 'start 1\n');
  assert.match(later.stderr, /attempt 1 is lost/);
  // Without --follow, the log is printed as any finished attempt's.
  const plain = await runDrover(['logs', 'F', '1'], { cwd });
  assert.deepEqual([plain.code, plain.stdout, plain.stderr], [0, 'start 1\n', '']);
});
