import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { droverJson, runDrover } from '../helpers/drover.js';
import { tempWorkspace } from '../helpers/workspace.js';

interface Spread {
  min: number | null;
  median: number | null;
  p95: number | null;
  max: number | null;
}
interface Status {
  durations: Spread;
  slowest: {
    task: number;
    attempt: number;
    seconds: number;
    state: string;
    tag: string;
    command: string;
    params: Record<string, string>;
  }[];
}
interface Attempt {
  task: number;
  attempt: number;
  started_at: number | null;
  ended_at: number | null;
  current: boolean;
  command: string;
}

/** The spread the test computes itself from `list --attempts --json`: current commands' ended attempts. */
function expected(attempts: Attempt[]): { spread: Spread; sorted: number[] } {
  const d = attempts
    .filter((a) => a.current && a.started_at !== null && a.ended_at !== null)
    .map((a) => a.ended_at! - a.started_at!)
    .sort((a, b) => a - b);
  const n = d.length;
  const median = n % 2 === 1 ? d[(n - 1) / 2]! : (d[n / 2 - 1]! + d[n / 2]!) / 2;
  return {
    spread: { min: d[0]!, median, p95: d[Math.ceil(0.95 * n) - 1]!, max: d[n - 1]! },
    sorted: d,
  };
}

function near(actual: number | null, want: number, what: string): void {
  assert.ok(actual !== null && Math.abs(actual - want) <= 0.0011, `${what}: ${actual} vs ${want}`);
}

test('status shows the duration spread and the slowest tasks with their tag, command and params; none of a replaced command', async (t) => {
  const cwd = tempWorkspace(t);
  fs.writeFileSync(path.join(cwd, 'run.sh'), 'sleep "$1"\n');
  const pre = await runDrover(
    [
      'prelaunch',
      '+command',
      'sh run.sh',
      '+jobname',
      'D',
      '+pos-arg',
      '0',
      '0.1',
      '0.2',
      '0.3',
      '0.4',
      '+tag',
      'D',
      '+q',
    ],
    { cwd },
  );
  assert.equal(pre.code, 0, pre.stderr);
  const none = await droverJson<Status>(['status', 'D', '--json'], { cwd });
  assert.deepEqual(none.durations, { min: null, median: null, p95: null, max: null });
  assert.deepEqual(none.slowest, []);

  const r = await runDrover(['launch', '--jobname', 'D', '--max-tasks', '2', '-q'], { cwd });
  assert.equal(r.code, 0, r.stderr);
  const check = async () => {
    const s = await droverJson<Status>(['status', 'D', '--json'], { cwd });
    const all = await droverJson<Attempt[]>(['list', 'D', '--attempts', '--json'], { cwd });
    const listed = new Map(
      (
        await droverJson<{ task: number; tag: string; params: Record<string, string> }[]>(
          ['list', 'D', '--json'],
          { cwd },
        )
      ).map((x) => [x.task, x]),
    );
    const want = expected(all);
    for (const k of ['min', 'median', 'p95', 'max'] as const) near(s.durations[k], want.spread[k]!, k);
    assert.equal(s.slowest.length, Math.min(5, want.sorted.length));
    s.slowest.forEach((a, i) => {
      near(a.seconds, want.sorted.at(-1 - i)!, `slowest ${i}`);
      const mine = all.find((x) => x.task === a.task && x.attempt === a.attempt)!;
      assert.ok(mine.current, `slowest names task ${a.task}'s replaced command`);
      assert.equal(a.command, mine.command);
      assert.equal(a.tag, listed.get(a.task)!.tag);
      assert.notEqual(a.tag, '');
      assert.deepEqual(a.params, listed.get(a.task)!.params);
    });
    return s;
  };
  const first = await check();
  assert.equal(first.slowest.length, 5);
  assert.ok(first.durations.max! >= 0.4, 'the task that slept 0.4 s');
  const human = await runDrover(['status', 'D'], { cwd });
  assert.match(human.stdout, /durations: min \S+, median \S+, p95 \S+, max \S+/);
  // A sweep's slowest tasks are named by their values (the positional one here), not by the long command.
  assert.match(human.stdout, /slowest\n.*task.*attempt.*duration.*state +pos1 *\n/);
  assert.match(human.stdout, /\n 5 +1 +\S+ +succeeded +0\.4 *\n/);
  assert.deepEqual(first.slowest[0]!.params, { pos1: '0.4' });

  // Task 5 (the slowest) gets a new command: its 0.4 s attempt is history, not its own, nor the job's.
  const file = path.join(cwd, '.drover', 'jobs', 'D', 'jobs.json');
  const jobs = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, [string, string]>;
  jobs['5'] = ['sh run.sh 0.05', jobs['5']![1]];
  fs.writeFileSync(file, JSON.stringify(jobs));
  const after = await check();
  assert.ok(after.slowest.every((a) => a.task !== 5));
  assert.equal(after.slowest.length, 4);
  const stale = await runDrover(['status', 'D'], { cwd });
  assert.doesNotMatch(stale.stdout, /0\.4/);
  assert.doesNotMatch(stale.stdout, /\n 5 +1 /);
});

test('status names the slowest tasks of a job without sweep values (a jobfile by hand) by tag and command', async (t) => {
  const cwd = tempWorkspace(t);
  const dir = path.join(cwd, '.drover', 'jobs', 'H');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(
    path.join(dir, 'jobs.json'),
    JSON.stringify({ 1: ['sleep 0.2', 'slow'], 2: ['true', 'fast'] }),
  );
  const r = await runDrover(['launch', 'H', '-q'], { cwd });
  assert.equal(r.code, 0, r.stderr);
  const s = await droverJson<Status>(['status', 'H', '--json'], { cwd });
  assert.deepEqual(
    s.slowest.map((a) => [a.task, a.tag, a.command, a.params]),
    [
      [1, 'slow', 'sleep 0.2', {}],
      [2, 'fast', 'true', {}],
    ],
  );
  const human = await runDrover(['status', 'H'], { cwd });
  assert.match(human.stdout, /slowest\n.*task.*attempt.*duration.*state +tag +command *\n/);
  assert.match(human.stdout, /\n 1 +1 +\S+ +succeeded +slow +sleep 0\.2 *\n/);
});
