import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { type ListedTask, list } from '../helpers/contract.js';
import { droverJson, runDrover } from '../helpers/drover.js';
import { tempWorkspace } from '../helpers/workspace.js';

/**
 * `list --json` has SQLite write the JSON text (task-json.ts, taskJsonChunks). Whatever a command holds, the
 * array must parse to exactly the commands of the jobfile, with the contract's fields, in task order, also
 * across the chunks it is written in, and with the filters.
 */
const TRICKY = [
  'echo "double" \'single\'',
  'printf "a\\tb\\\\n" back\\slash',
  'echo first\necho second',
  `echo control${String.fromCharCode(1)}${String.fromCharCode(31)}char`,
  'echo é 漢字 🚀',
];

test('list --json reproduces every command exactly, with the contract’s fields, in task order', async (t) => {
  const cwd = tempWorkspace(t);
  const pre = await runDrover(['prelaunch', '+command', 'x', '+jobname', 'T', '+pos-arg', ...TRICKY, '+q'], {
    cwd,
  });
  assert.equal(pre.code, 0, pre.stderr);
  const jobfile = JSON.parse(
    fs.readFileSync(path.join(cwd, '.drover', 'jobs', 'T', 'jobs.json'), 'utf8'),
  ) as Record<string, [string, string]>;
  const tasks = await list('T', { cwd });
  assert.equal(tasks.length, TRICKY.length);
  assert.deepEqual(
    tasks.map((r) => r.command),
    Object.keys(jobfile)
      .sort((a, b) => Number(a) - Number(b))
      .map((k) => jobfile[k]![0]),
  );
  assert.deepEqual(tasks[0], {
    task: 1,
    command: `x ${TRICKY[0]}`,
    tag: '',
    state: 'pending',
    exit_code: null,
    attempts: 0,
    requeues: 0,
    launch: null,
    started_at: null,
    ended_at: null,
    duration_s: null,
    host: null,
    params: { pos1: TRICKY[0] },
  });
  assert.deepEqual(
    tasks.map((r) => r.task),
    [1, 2, 3, 4, 5],
  );
});

test('list --json of a job larger than one chunk, and of every job: each task once, in order, jobname first', async (t) => {
  const cwd = tempWorkspace(t);
  const n = 45_000; // more than two chunks of 20,000 ids
  const values = Array.from({ length: n }, (_, i) => String(i + 1));
  for (const [job, vals] of [
    ['big', values],
    ['small', ['a', 'b']],
  ] as const) {
    const r = await runDrover(['prelaunch', '+command', 'run', '+jobname', job, '+pos-arg', ...vals, '+q'], {
      cwd,
    });
    assert.equal(r.code, 0, r.stderr);
  }
  const big = await list('big', { cwd });
  assert.equal(big.length, n);
  assert.ok(big.every((r, i) => r.task === i + 1 && r.command === `run ${i + 1}`));
  const all = await droverJson<(ListedTask & { jobname: string })[]>(['list', '--json'], { cwd });
  assert.equal(all.length, n + 2);
  assert.deepEqual(Object.keys(all[0]!), [
    'jobname',
    'task',
    'command',
    'tag',
    'state',
    'exit_code',
    'attempts',
    'requeues',
    'launch',
    'started_at',
    'ended_at',
    'duration_s',
    'host',
    'params',
  ]);
  assert.deepEqual(
    all.slice(-2).map((r) => [r.jobname, r.task, r.command]),
    [
      ['small', 1, 'run a'],
      ['small', 2, 'run b'],
    ],
  );
  const some = await droverJson<ListedTask[]>(
    ['list', '--jobname', 'big', '--tasklist', '2,20000-20001,44999', '--state', 'pending', '--json'],
    { cwd },
  );
  assert.deepEqual(
    some.map((r) => r.task),
    [2, 20000, 20001, 44999],
  );
  const none = await runDrover(['list', '--jobname', 'big', '--state', 'failed', '--json'], { cwd });
  assert.equal(none.stdout, '[]\n');
});

test('drover list JOB is drover list --jobname JOB; two different jobs are refused', async (t) => {
  const cwd = tempWorkspace(t);
  for (const job of ['A', 'B']) {
    const pre = await runDrover(
      ['prelaunch', '+command', `run ${job}`, '+jobname', job, '+pos-arg', '1', '2', '+q'],
      {
        cwd,
      },
    );
    assert.equal(pre.code, 0, pre.stderr);
  }
  const byName = await droverJson<ListedTask[]>(['list', 'B', '--json'], { cwd });
  assert.deepEqual(
    byName.map((r) => [r.task, r.command]),
    [
      [1, 'run B 1'],
      [2, 'run B 2'],
    ],
  );
  assert.deepEqual(await droverJson<ListedTask[]>(['list', '--jobname', 'B', '--json'], { cwd }), byName);
  const both = await runDrover(['list', 'A', '--jobname', 'B'], { cwd });
  assert.equal(both.code, 2);
  assert.match(both.stderr, /job 'A' and --jobname 'B' differ/);
  assert.equal(both.stderr.trim().split('\n').length, 1);
});
