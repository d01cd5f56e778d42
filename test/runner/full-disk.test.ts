import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { droverJson, runDrover, startDrover } from '../helpers/drover.js';
import { fillDisk, needsRoot, taskGate, tmpfsFolder } from '../helpers/mounts.js';
import { recordFiles } from '../helpers/workspace.js';

/**
 * A runner on a disk that fills up (a real 2 MB tmpfs): it never dies of it, never leaves half a line, starts
 * no task while it cannot record it, writes what it kept once space returns, and no task that finished ends
 * `lost` because a write failed.
 */

interface Status {
  tasks: number;
  counts: Record<string, number>;
}

async function until(what: string, probe: () => boolean, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A job `name` of `count` tasks in `dir` (task N runs `sh gated.sh N`): tasks 1 and 2 run `then` at once, the
 * others once the test opens the returned gate, which it does after filling the disk, so the runner is still
 * running tasks when the disk fills, however fast the machine: with plain `true` tasks a fast one ran all 200
 * before the disk was full, and nothing was left to block.
 */
async function gatedJob(
  t: { after(fn: () => void): void },
  dir: string,
  name: string,
  count: number,
  then = 'true',
): Promise<{ open(): void }> {
  const gate = taskGate(t);
  fs.writeFileSync(path.join(dir, 'gated.sh'), `${gate.hold('"$1"', 2)}\n${then}\n`);
  const ids = Array.from({ length: count }, (_, i) => String(i + 1));
  const pre = await runDrover(
    ['prelaunch', '+command', 'sh gated.sh', '+jobname', name, '+pos-arg', ...ids],
    {
      cwd: dir,
    },
  );
  assert.equal(pre.code, 0, pre.stderr);
  return gate;
}

/** Every line of the folder's record files, each checked to be a whole record. */
function wholeRecords(dir: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const file of recordFiles(dir)) {
    const text = fs.readFileSync(file, 'utf8');
    assert.ok(text === '' || text.endsWith('\n'), `${file} ends with a whole line`);
    for (const l of text.split('\n').slice(0, -1)) out.push(JSON.parse(l) as Record<string, unknown>);
  }
  return out;
}

function assertNoStackTrace(stderr: string): void {
  assert.doesNotMatch(stderr, /^\s+at /m, 'no stack trace');
  assert.doesNotMatch(stderr, /node:internal|Error: E[A-Z]+/, 'no raw Node error');
}

test('60 tasks writing 100 KB each on a 2 MB disk: the runner holds its records and goes on as space returns', {
  skip: needsRoot,
  timeout: 180_000,
}, async (t) => {
  const dir = tmpfsFolder(t, '2m');
  const ids = Array.from({ length: 60 }, (_, i) => String(i + 1));
  const pre = await runDrover(
    ['prelaunch', '+command', 'head -c 100000 /dev/zero && echo', '+jobname', 'big', '+pos-arg', ...ids],
    { cwd: dir },
  );
  assert.equal(pre.code, 0, pre.stderr);
  // A log file per attempt: removing them gives the space back at once (a slot's segment stays open, so its space
  // comes back only when the runner ends — docs/local.md#logs).
  const run = startDrover(['launch', '--jobname', 'big', '--max-tasks', '4', '--logs', 'files'], {
    cwd: dir,
  });
  let stderr = '';
  run.child.stderr!.on('data', (d: string) => {
    stderr += d;
  });
  let ended = false;
  const result = run.result.finally(() => {
    ended = true;
  });
  // Each time the runner says it is blocked: check it starts nothing for a while, then free the space (the
  // tasks' logs) and let it go on.
  const windows: [number, number][] = [];
  const logs = path.join(dir, '.drover', 'logs', 'big', '1');
  let blocks = 0;
  while (!ended) {
    const seen = stderr.split('disk full at').length - 1;
    if (seen > blocks) {
      blocks = seen;
      const from = Date.now() / 1000 + 0.5;
      await sleep(1500);
      windows.push([from, Date.now() / 1000]);
      for (const f of fs.readdirSync(logs)) fs.rmSync(path.join(logs, f), { force: true });
    }
    await sleep(25);
  }
  const r = await result;
  assertNoStackTrace(r.stderr);
  const records = path.join(dir, '.drover', 'jobs', 'big', 'launches', '1', 'records');
  assert.match(
    r.stderr,
    new RegExp(`drover: disk full at ${records}/g1\\.[^ ]+\\.jsonl \\(write\\): keeping`),
  );
  assert.match(r.stderr, /drover: records written again to /);
  assert.ok(blocks >= 1);
  for (const l of r.stderr.split('\n').filter((x) => x.startsWith('drover:'))) {
    assert.doesNotMatch(l, /\n/);
  }

  // Whole lines; no task started while its records could not be written.
  const rs = wholeRecords(dir);
  for (const s of rs.filter((x) => x.type === 'start')) {
    for (const [from, to] of windows) {
      assert.ok(!((s.at as number) > from && (s.at as number) < to), `task ${s.task} started while blocked`);
    }
  }
  assert.equal(rs.at(-1)!.type, 'runner-end', 'the runner finished');

  // Every task ended exactly once, none lost: finished tasks are recorded as they finished.
  fs.rmSync(logs, { recursive: true, force: true });
  const status = await droverJson<Status>(['status', 'big', '--json'], { cwd: dir });
  assert.equal(status.counts.lost, 0);
  assert.equal(status.counts.queued, 0);
  assert.equal(status.counts.running, 0);
  assert.equal(
    Object.values(status.counts).reduce((a, b) => a + b, 0),
    60,
  );
  const ends = rs.filter((x) => x.type === 'end' && !x.retry);
  assert.equal(new Set(ends.map((x) => x.task)).size, 60);
  assert.equal(status.counts.succeeded, ends.filter((x) => x.state === 'succeeded').length);
});

test('space that never returns: no task starts, and a forced exit saves the records and says how to hand them over', {
  skip: needsRoot,
  timeout: 120_000,
}, async (t) => {
  const dir = tmpfsFolder(t, '2m');
  const spillDir = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-spill-'));
  t.after(() => fs.rmSync(spillDir, { recursive: true, force: true }));
  const gate = await gatedJob(t, dir, 'q', 200);
  const run = startDrover(['launch', '--jobname', 'q', '--max-tasks', '2'], {
    cwd: dir,
    env: { TMPDIR: spillDir },
  });
  let stderr = '';
  run.child.stderr!.on('data', (d: string) => {
    stderr += d;
  });
  await until('the runner started', () => wholeRecords(dir).some((r) => r.type === 'start'));
  const ballast = fillDisk(dir);
  gate.open();
  await until('the runner blocked', () => stderr.includes('disk full at'));
  const blockedAt = Date.now() / 1000;
  await sleep(1500);
  run.child.kill('SIGTERM'); // cancel: the queued tasks are skipped, and those records wait too
  await sleep(1500);
  assert.equal(run.child.exitCode, null, 'the runner waits for space to record its tasks');
  run.child.kill('SIGTERM'); // quit now
  const r = await run.result;
  assert.equal(r.code, 143);
  assertNoStackTrace(r.stderr);
  const m = /saved in (\S+): once there is space, run: cat \S+ >> (\S+)\n/.exec(r.stderr);
  assert.ok(m, r.stderr);
  const [, spill, file] = m;
  assert.ok(spill!.startsWith(spillDir));

  // Space returns; the user hands the records over as told; nothing is lost.
  fs.rmSync(ballast);
  fs.appendFileSync(file!, fs.readFileSync(spill!));
  const rs = wholeRecords(dir);
  const starts = rs.filter((x) => x.type === 'start');
  assert.ok(
    starts.every((s) => (s.at as number) < blockedAt + 0.5),
    'no task started after the records could not be written',
  );
  assert.ok(starts.length < 200);
  const status = await droverJson<Status>(['status', 'q', '--json'], { cwd: dir });
  assert.equal(status.counts.lost, 0);
  assert.equal(status.counts.succeeded, starts.length);
  assert.equal(status.counts.cancelled, 200 - starts.length);
});

test('one SIGTERM on a disk that stays full (timeout, a scheduler): the runner waits a while, then saves its records and ends', {
  skip: needsRoot,
  timeout: 120_000,
}, async (t) => {
  const dir = tmpfsFolder(t, '2m');
  const spillDir = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-spill-'));
  t.after(() => fs.rmSync(spillDir, { recursive: true, force: true }));
  const gate = await gatedJob(t, dir, 'q', 50, 'sleep 0.2');
  const run = startDrover(['launch', '--jobname', 'q', '--max-tasks', '2'], {
    cwd: dir,
    env: { TMPDIR: spillDir },
  });
  let stderr = '';
  run.child.stderr!.on('data', (d: string) => {
    stderr += d;
  });
  await until('the runner started', () => wholeRecords(dir).some((r) => r.type === 'start'));
  const ballast = fillDisk(dir);
  gate.open();
  await until('the runner blocked', () => stderr.includes('disk full at'));
  run.child.kill('SIGTERM'); // once, as `timeout` does: it must not wait for space forever
  const r = await run.result;
  assert.equal(r.code, 143);
  assertNoStackTrace(r.stderr);
  assert.match(r.stderr, /waiting up to 10 s for space/);
  const m = /saved in (\S+): once there is space, run: cat \S+ >> (\S+)\n/.exec(r.stderr);
  assert.ok(m, r.stderr);
  fs.rmSync(ballast);
  fs.appendFileSync(m[2]!, fs.readFileSync(m[1]!));
  const status = await droverJson<Status>(['status', 'q', '--json'], { cwd: dir });
  assert.equal(status.counts.lost, 0, 'handed over, every record counts: nothing lost');
  assert.equal(status.counts.succeeded! + status.counts.cancelled!, 50);
});

test('a detached runner whose own log is on the full disk: it does not die of the messages it cannot write', {
  skip: needsRoot,
  timeout: 120_000,
}, async (t) => {
  const dir = tmpfsFolder(t, '2m');
  const gate = await gatedJob(t, dir, 'd', 300);
  const { pid } = await droverJson<{ pid: number }>(
    ['launch', '--jobname', 'd', '--detach', '--max-tasks', '2', '--json'],
    { cwd: dir },
  );
  const alive = () => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  await until('the runner started', () => wholeRecords(dir).some((r) => r.type === 'start'));
  const ballast = fillDisk(dir);
  gate.open();
  // Blocked: the record file stops growing while the runner lives on.
  const size = () => recordFiles(dir).reduce((n, f) => n + fs.statSync(f).size, 0);
  let last = size();
  let since = Date.now();
  await until('the runner blocked', () => {
    const now = size();
    if (now !== last) {
      last = now;
      since = Date.now();
    }
    return Date.now() - since > 1500;
  });
  assert.ok(alive(), 'the runner survived the full disk');
  const quietFrom = since / 1000 + 0.5;
  const freedAt = Date.now() / 1000;
  fs.rmSync(ballast);
  await until('the runner finished', () => !alive(), 90_000);
  const rs = wholeRecords(dir);
  assert.equal(rs.at(-1)!.type, 'runner-end');
  for (const s of rs.filter((x) => x.type === 'start')) {
    assert.ok(
      !((s.at as number) > quietFrom && (s.at as number) < freedAt),
      `task ${s.task} started while blocked`,
    );
  }
  const status = await droverJson<Status>(['status', 'd', '--json'], { cwd: dir });
  assert.equal(status.counts.succeeded, 300);
});
