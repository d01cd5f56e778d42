import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { droverJson, runDrover } from '../helpers/drover.js';
import { tempWorkspace } from '../helpers/workspace.js';
import { poolWorkspace } from '../pool/helpers.js';

/** A task of `list --json` with the timings of its latest attempt. */
interface Timed {
  task: number;
  command: string;
  state: string;
  started_at: number | null;
  ended_at: number | null;
  duration_s: number | null;
  host: string | null;
}

const TIMINGS = ['started_at', 'ended_at', 'duration_s', 'host'] as const;

async function prelaunch(cwd: string, job: string, values: string[]): Promise<void> {
  const r = await runDrover(
    ['prelaunch', '+command', 'sh run.sh', '+jobname', job, '+pos-arg', ...values, '+q'],
    {
      cwd,
    },
  );
  assert.equal(r.code, 0, r.stderr);
}

/** The attempts a job's tasks ran, from `list --attempts --json` (JSON stringified by JavaScript). */
async function attempts(cwd: string, job: string) {
  return droverJson<{ task: number; attempt: number; started_at: number; ended_at: number; host: string }[]>(
    ['list', job, '--attempts', '--json'],
    { cwd },
  );
}

test('list --json carries the latest attempt’s start, end, duration and host; a never-run task has nulls', async (t) => {
  const cwd = tempWorkspace(t);
  // Task 1 fails on its first try and succeeds on the second: its timings are the second attempt's.
  fs.writeFileSync(
    path.join(cwd, 'run.sh'),
    'if [ "$1" = a ] && [ ! -e tried ]; then : > tried; exit 3; fi\nsleep 0.2\n',
  );
  await prelaunch(cwd, 'T', ['a', 'b', 'c']);
  const r = await runDrover(['launch', '--jobname', 'T', '--tasklist', '1-2', '--retries', '1', '-q'], {
    cwd,
  });
  assert.equal(r.code, 0, r.stderr);
  const tasks = await droverJson<Timed[]>(['list', 'T', '--json'], { cwd });
  const all = await attempts(cwd, 'T');
  assert.equal(all.filter((a) => a.task === 1).length, 2);
  for (const task of tasks.slice(0, 2)) {
    const latest = all.filter((a) => a.task === task.task).at(-1)!;
    assert.equal(task.state, 'succeeded');
    assert.equal(typeof task.started_at, 'number');
    assert.ok(
      Math.abs(task.started_at! - latest.started_at) < 1e-3,
      `${task.started_at} vs ${latest.started_at}`,
    );
    assert.ok(Math.abs(task.ended_at! - latest.ended_at) < 1e-3);
    assert.ok(Math.abs(task.duration_s! - (latest.ended_at - latest.started_at)) < 1e-3);
    assert.ok(task.duration_s! >= 0.2, `task ${task.task} slept 0.2 s, its duration says ${task.duration_s}`);
    assert.equal(task.host, latest.host);
    assert.ok(task.host !== null && task.host.length > 0);
  }
  assert.deepEqual(
    TIMINGS.map((k) => tasks[2]![k]),
    [null, null, null, null],
  );
  assert.deepEqual(Object.keys(tasks[0]!).slice(-5), [...TIMINGS, 'params'], 'the timings, then params last');
});

test('a task whose command changed shows none of its earlier command’s timings (invariant 1)', async (t) => {
  const cwd = tempWorkspace(t);
  fs.writeFileSync(path.join(cwd, 'run.sh'), 'exit 0\n');
  await prelaunch(cwd, 'E', ['a', 'b']);
  const r = await runDrover(['launch', '--jobname', 'E', '-q'], { cwd });
  assert.equal(r.code, 0, r.stderr);
  // Task 1 run again in a second launch: its timings are that launch's attempt's, not the first one's.
  const rerun = await runDrover(['launch', '--jobname', 'E', '--tasklist', '1', '-q'], { cwd });
  assert.equal(rerun.code, 0, rerun.stderr);
  const second = (await attempts(cwd, 'E')).filter((a) => a.task === 1);
  assert.deepEqual(
    second.map((a) => a.attempt),
    [1, 2],
  );
  const rerunTask = (await droverJson<Timed[]>(['list', 'E', '--json'], { cwd }))[0]!;
  assert.ok(Math.abs(rerunTask.started_at! - second[1]!.started_at) < 1e-3);
  const file = path.join(cwd, '.drover', 'jobs', 'E', 'jobs.json');
  const jobs = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, [string, string]>;
  jobs['2'] = ['sh run.sh changed', jobs['2']![1]];
  fs.writeFileSync(file, JSON.stringify(jobs));
  const tasks = await droverJson<Timed[]>(['list', 'E', '--json'], { cwd });
  assert.equal(tasks[0]!.state, 'succeeded');
  assert.equal(typeof tasks[0]!.ended_at, 'number');
  assert.equal(tasks[1]!.command, 'sh run.sh changed');
  assert.equal(tasks[1]!.state, 'pending');
  assert.deepEqual(
    TIMINGS.map((k) => tasks[1]![k]),
    [null, null, null, null],
  );
  // Launched again, the task's timings are its new attempt's (attempt 2 of task id 2).
  const again = await runDrover(['launch', '--jobname', 'E', '--tasklist', '2', '-q'], { cwd });
  assert.equal(again.code, 0, again.stderr);
  const after = await droverJson<Timed[]>(['list', 'E', '--json'], { cwd });
  const latest = (await attempts(cwd, 'E')).filter((a) => a.task === 2).at(-1)!;
  assert.equal(latest.attempt, 2);
  assert.ok(Math.abs(after[1]!.started_at! - latest.started_at) < 1e-3);
});

test('the server’s task route carries the same timings as list --json', async (t) => {
  const { cwd, server } = await poolWorkspace(t);
  fs.writeFileSync(path.join(cwd, 'run.sh'), 'exit 0\n');
  await prelaunch(cwd, 'A', ['a', 'b']);
  const r = await runDrover(['launch', '--jobname', 'A', '--tasklist', '1', '-q'], { cwd });
  assert.equal(r.code, 0, r.stderr);
  const listed = await droverJson<Timed[]>(['list', 'A', '--json'], { cwd });
  const res = await fetch(`${server.url}/v1/jobs/A/tasks`, {
    headers: { authorization: `Bearer ${server.token}` },
  });
  assert.equal(res.status, 200);
  const api = (await res.json()) as Timed[];
  assert.equal(api.length, 2);
  for (const [i, task] of api.entries()) {
    for (const k of TIMINGS) {
      const want = listed[i]![k];
      if (typeof want === 'number') assert.ok(Math.abs((task[k] as number) - want) < 1e-3, k);
      else assert.equal(task[k], want, k);
    }
  }
  assert.equal(typeof api[0]!.duration_s, 'number');
  assert.equal(api[1]!.started_at, null);
});
