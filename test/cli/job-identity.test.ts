// A job's identity (docs/concepts.md invariant 1, issue "The record cannot lie" §1): a task's state belongs to the command
// it has now, whoever rewrote the jobfile (drover prelaunch, onager, an editor), before, during or after a launch.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { type Counts, counts, list, status, statusWhen } from '../helpers/contract.js';
import { droverJson, runDrover } from '../helpers/drover.js';
import { ledgerDump, tempWorkspace } from '../helpers/workspace.js';

const jobfileOf = (cwd: string, job: string) => path.join(cwd, '.drover', 'jobs', job, 'jobs.json');

/** Write a jobfile by hand, in onager's format (as onager's json.dump writes it). */
function writeByHand(cwd: string, job: string, entries: [number, string][]): void {
  const body = entries.map(([id, c]) => `"${id}": [${JSON.stringify(c)}, ""]`).join(', ');
  fs.mkdirSync(path.dirname(jobfileOf(cwd, job)), { recursive: true });
  fs.writeFileSync(jobfileOf(cwd, job), `{${body}}`);
}

async function ok(args: string[], cwd: string) {
  const r = await runDrover(args, { cwd });
  assert.equal(r.code, 0, `drover ${args.join(' ')}\n${r.stderr}`);
  return r;
}

/** The sum of counts never exceeds the job's tasks: it is exactly the task count. */
function assertCountsAddUp(s: { tasks: number; counts: Counts }): void {
  const total = Object.values(s.counts).reduce((a, b) => a + b, 0);
  assert.equal(total, s.tasks, `counts ${JSON.stringify(s.counts)} add up to ${total}, not ${s.tasks} tasks`);
}

test('re-prelaunch with other commands: the new commands are pending, the old attempts are history', async (t) => {
  const cwd = tempWorkspace(t);
  await ok(
    ['prelaunch', '+command', 'echo', '+jobname', 'j', '+pos-arg', '1', '2', '3', '4', '5', '+q'],
    cwd,
  );
  await ok(['launch', '--jobname', 'j', '-q'], cwd);
  const again = await ok(['prelaunch', '+command', 'echo', '+jobname', 'j', '+pos-arg', 'X'], cwd);
  assert.match(
    again.stderr,
    /1 task changed, 4 removed; changed tasks are pending again; their 5 earlier attempts are kept as history/,
  );
  const s = await status('j', { cwd });
  assert.equal(s.tasks, 1);
  assert.deepEqual(s.counts, counts({ pending: 1 }));
  const [task] = await list('j', { cwd });
  assert.deepEqual(
    { command: task?.command, state: task?.state, attempts: task?.attempts, exit: task?.exit_code },
    { command: 'echo X', state: 'pending', attempts: 0, exit: null },
  );
  // The history is still there, marked as earlier commands.
  const attempts = await droverJson<{ task: number; command: string; current: boolean; state: string }[]>(
    ['list', 'j', '--attempts', '--json'],
    { cwd },
  );
  assert.deepEqual(
    attempts.map((a) => [a.task, a.command, a.current, a.state]),
    [1, 2, 3, 4, 5].map((i) => [i, `echo ${i}`, false, 'succeeded']),
  );
  // Its logs are not the earlier command's.
  const logs = await runDrover(['logs', 'j', '1'], { cwd });
  assert.equal(logs.code, 2);
  assert.match(logs.stderr, /no attempt yet/);
});

test('+command false over the same ids: every task is pending, and --unfinished runs the new commands', async (t) => {
  const cwd = tempWorkspace(t);
  await ok(['prelaunch', '+command', 'true', '+jobname', 'j', '+pos-arg', '1', '2', '3', '+q'], cwd);
  await ok(['launch', '--jobname', 'j', '-q'], cwd);
  await ok(['prelaunch', '+command', 'false', '+jobname', 'j', '+pos-arg', '1', '2', '3', '+q'], cwd);
  const s = await status('j', { cwd });
  assert.deepEqual(s.counts, counts({ pending: 3 }));
  const rerun = await runDrover(['launch', '--jobname', 'j', '--unfinished', '-q'], { cwd });
  assert.equal(rerun.code, 1, rerun.stderr);
  assert.deepEqual((await status('j', { cwd })).counts, counts({ failed: 3 }));
  const tasks = await list('j', { cwd });
  assert.deepEqual(
    tasks.map((x) => [x.command, x.state, x.attempts]),
    [1, 2, 3].map((i) => [`false ${i}`, 'failed', 1]),
  );
});

test('re-prelaunch while a launch runs is refused and writes nothing; +append is allowed', async (t) => {
  const cwd = tempWorkspace(t);
  await ok(['prelaunch', '+command', 'sleep 30; echo', '+jobname', 'j', '+pos-arg', '1', '2', '+q'], cwd);
  await ok(['launch', '--jobname', 'j', '--detach', '--kill-grace', '1', '--max-tasks', '4'], cwd);
  await statusWhen('j', { cwd }, 'both tasks to run', (s) => s.counts.running === 2);
  const jobfile = fs.readFileSync(jobfileOf(cwd, 'j'), 'utf8');
  const tasksBefore = ledgerDump(cwd)!.filter((l) => l.startsWith('tasks '));
  const refused = await runDrover(['prelaunch', '+command', 'echo', '+jobname', 'j', '+pos-arg', 'X'], {
    cwd,
  });
  assert.equal(refused.code, 2);
  assert.equal(refused.stderr.trim().split('\n').length, 1, refused.stderr);
  assert.match(refused.stderr, /job 'j' has tasks queued or running \(launch 1\).*drover cancel j/);
  assert.equal(refused.stdout, '');
  assert.equal(fs.readFileSync(jobfileOf(cwd, 'j'), 'utf8'), jobfile);
  assert.deepEqual(
    ledgerDump(cwd)!.filter((l) => l.startsWith('tasks ')),
    tasksBefore,
  );
  // Adding tasks changes none of the running ones.
  await ok(['prelaunch', '+command', 'echo', '+jobname', 'j', '+pos-arg', '3', '+q', '+append'], cwd);
  const s = await status('j', { cwd });
  assert.deepEqual(s.counts, counts({ running: 2, pending: 1 }));
  await ok(['cancel', 'j', '--yes'], cwd);
  await ok(['prelaunch', '+command', 'echo', '+jobname', 'j', '+pos-arg', 'X', '+q'], cwd);
  assert.deepEqual((await status('j', { cwd })).counts, counts({ pending: 1 }));
});

test('a jobfile edited behind drover’s back while its launch runs: the rules apply before any answer', async (t) => {
  const cwd = tempWorkspace(t);
  await ok(
    ['prelaunch', '+command', 'sleep 30; echo', '+jobname', 'j', '+pos-arg', '1', '2', '3', '+q'],
    cwd,
  );
  await ok(['launch', '--jobname', 'j', '--detach', '--kill-grace', '1', '--max-tasks', '4'], cwd);
  await statusWhen('j', { cwd }, 'three tasks to run', (s) => s.counts.running === 3);
  // Task 2 gets a new command, task 3 leaves.
  writeByHand(cwd, 'j', [
    [1, 'sleep 30; echo 1'],
    [2, 'echo two'],
  ]);
  const s = await status('j', { cwd });
  assert.equal(s.tasks, 2);
  assert.deepEqual(s.counts, counts({ running: 1, pending: 1 }));
  assertCountsAddUp(s);
  // Task 2's earlier command still runs: no second copy of task 2 until it has ended.
  const twice = await runDrover(['launch', '--jobname', 'j', '--tasklist', '2', '-q'], { cwd });
  assert.equal(twice.code, 2, twice.stderr);
  assert.match(twice.stderr, /task 2 of 'j' is already queued or running/);
  // Task 3 is not the job's any more: it cannot be named.
  const gone = await runDrover(['launch', '--jobname', 'j', '--tasklist', '3', '-q'], { cwd });
  assert.equal(gone.code, 2);
  assert.match(gone.stderr, /names task 3.*job 'j'/);
  await ok(['cancel', 'j', '--yes'], cwd);
  const after = await status('j', { cwd });
  assert.deepEqual(after.counts, counts({ cancelled: 1, pending: 1 }));
  await ok(['launch', '--jobname', 'j', '--tasklist', '2', '-q'], cwd);
  const tasks = await list('j', { cwd });
  assert.deepEqual(
    tasks.map((x) => [x.task, x.command, x.state, x.attempts]),
    [
      [1, 'sleep 30; echo 1', 'cancelled', 1],
      [2, 'echo two', 'succeeded', 1],
    ],
  );
});

test('a jobfile with gaps has exactly its tasks; a stale ledger row for a removed id never runs', async (t) => {
  const cwd = tempWorkspace(t);
  await ok(['prelaunch', '+command', 'echo', '+jobname', 'g', '+pos-arg', 'a', 'b', 'c', '+q'], cwd);
  writeByHand(cwd, 'g', [
    [1, 'echo a'],
    [3, 'echo c'],
  ]);
  const s = await status('g', { cwd });
  assert.equal(s.tasks, 2);
  assert.deepEqual(s.counts, counts({ pending: 2 }));
  for (const bad of ['2', '1-3']) {
    const r = await runDrover(['launch', '--jobname', 'g', '--tasklist', bad, '-q'], { cwd });
    assert.equal(r.code, 2, `--tasklist ${bad}: ${r.stderr}`);
    assert.match(r.stderr, /names task 2, which job 'g' does not have/);
  }
  await ok(['launch', '--jobname', 'g', '--unfinished', '-q'], cwd);
  const after = await status('g', { cwd });
  assert.equal(after.launches[0]?.tasklist, '1,3');
  assert.deepEqual(after.counts, counts({ succeeded: 2 }));
  const tasks = await list('g', { cwd });
  assert.deepEqual(
    tasks.map((x) => x.task),
    [1, 3],
  );
  const logs = await runDrover(['logs', 'g', '2'], { cwd });
  assert.equal(logs.code, 2);
  // A jobfile onager wrote from scratch with gaps is read the same way.
  writeByHand(cwd, 'h', [
    [2, 'echo x'],
    [5, 'echo y'],
  ]);
  await ok(['launch', '--jobname', 'h', '-q'], cwd);
  const h = await status('h', { cwd });
  assert.equal(h.tasks, 2);
  assert.deepEqual(h.counts, counts({ succeeded: 2 }));
  assert.equal(h.launches[0]?.tasklist, '2,5');
});

// The re-prelaunch matrix: same, changed, fewer and more tasks; before, during and after a launch; by drover and by
// hand (onager's format). Starting point: tasks 1-4, `sleep S; echo N`.
const VARIANTS = {
  same: ['1', '2', '3', '4'],
  changed: ['1', 'X', '3', 'Y'],
  fewer: ['1', '2'],
  more: ['1', '2', '3', '4', '5', '6'],
} as const;

for (const [variant, values] of Object.entries(VARIANTS)) {
  for (const when of ['before', 'during', 'after'] as const) {
    for (const by of ['drover', 'hand'] as const) {
      test(`re-prelaunch matrix: ${variant} tasks, ${when} a launch, by ${by}`, async (t) => {
        const cwd = tempWorkspace(t);
        const base = when === 'during' ? 'sleep 30; echo' : 'echo';
        const prelaunch = (vals: readonly string[]) =>
          runDrover(['prelaunch', '+command', base, '+jobname', 'm', '+pos-arg', ...vals, '+q'], { cwd });
        assert.equal((await prelaunch(['1', '2', '3', '4'])).code, 0);
        if (when === 'during') {
          await ok(['launch', '--jobname', 'm', '--detach', '--kill-grace', '1', '--max-tasks', '4'], cwd);
          await statusWhen('m', { cwd }, 'four running', (s) => s.counts.running === 4);
        } else if (when === 'after') {
          await ok(['launch', '--jobname', 'm', '-q'], cwd);
        }
        const before = (await status('m', { cwd })).counts;
        const stateBefore = before.running > 0 ? 'running' : before.succeeded > 0 ? 'succeeded' : 'pending';
        if (by === 'drover') {
          const r = await prelaunch(values);
          if (when === 'during') {
            assert.equal(r.code, 2, 'drover refuses to re-prelaunch a running job');
            assert.deepEqual((await status('m', { cwd })).counts, before);
            await ok(['cancel', 'm', '--yes'], cwd);
            return;
          }
          assert.equal(r.code, 0, r.stderr);
        } else {
          writeByHand(
            cwd,
            'm',
            values.map((v, i) => [i + 1, `${base} ${v}`]),
          );
        }
        // What each task must show: unchanged tasks keep their state, changed and new ones are pending.
        const s = await status('m', { cwd });
        assert.equal(s.tasks, values.length);
        assertCountsAddUp(s);
        const tasks = await list('m', { cwd });
        assert.deepEqual(
          tasks.map((x) => [x.task, x.command, x.state]),
          values.map((v, i) => [
            i + 1,
            `${base} ${v}`,
            v === String(i + 1) && i < 4 ? stateBefore : 'pending',
          ]),
        );
        if (when === 'during') {
          // The earlier attempts end as they would have: cancelled, and counted for unchanged tasks only.
          await ok(['cancel', 'm', '--yes'], cwd);
          const after = await status('m', { cwd });
          assertCountsAddUp(after);
          const plan = await droverJson<{ tasklist: string }>(
            ['launch', '--jobname', 'm', '--unfinished', '--dry-run', '--json'],
            { cwd },
          );
          assert.equal(plan.tasklist, values.length === 2 ? '1-2' : `1-${values.length}`);
          return;
        }
        // --unfinished then runs every task that has not succeeded, each once, and no removed one.
        await ok(['launch', '--jobname', 'm', '--unfinished', '-q', '--max-tasks', '8'], cwd);
        const final = await status('m', { cwd });
        assert.deepEqual(final.counts, counts({ succeeded: values.length }));
        const attempts = await list('m', { cwd });
        assert.ok(
          attempts.every((x) => x.attempts === 1),
          JSON.stringify(attempts),
        );
      });
    }
  }
}

test('launch --jobfile naming a missing file is refused and runs nothing', async (t) => {
  const cwd = tempWorkspace(t);
  await ok(['prelaunch', '+command', 'echo', '+jobname', 'j', '+pos-arg', '1', '+q'], cwd);
  const before = ledgerDump(cwd);
  const r = await runDrover(['launch', '--jobname', 'j', '--jobfile', '/nonexistent/x.json', '-q'], { cwd });
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--jobfile \/nonexistent\/x\.json does not exist/);
  assert.deepEqual(ledgerDump(cwd), before);
});

test('a prelaunch the ledger refuses leaves the jobfile as it was (fake failure: a trigger)', async (t) => {
  const cwd = tempWorkspace(t);
  await ok(['prelaunch', '+command', 'echo', '+jobname', 'j', '+pos-arg', '1', '2', '+q'], cwd);
  const before = fs.readFileSync(jobfileOf(cwd, 'j'), 'utf8');
  const paramsFile = path.join(path.dirname(jobfileOf(cwd, 'j')), 'params.json');
  const paramsBefore = fs.readFileSync(paramsFile, 'utf8');
  // A failure after the jobfile is written, as a full disk at commit would give.
  const db = new Database(path.join(cwd, '.drover', 'ledger.db'));
  db.exec(
    "CREATE TRIGGER fake_failure BEFORE INSERT ON history BEGIN SELECT RAISE(FAIL, 'fake failure'); END",
  );
  db.close();
  const ledgerBefore = ledgerDump(cwd);
  for (const args of [
    ['+pos-arg', 'X'],
    ['+pos-arg', '3', '+append'],
  ]) {
    const r = await runDrover(['prelaunch', '+command', 'echo', '+jobname', 'j', ...args, '+q'], { cwd });
    assert.notEqual(r.code, 0);
    assert.equal(fs.readFileSync(jobfileOf(cwd, 'j'), 'utf8'), before, args.join(' '));
    assert.equal(fs.readFileSync(paramsFile, 'utf8'), paramsBefore, args.join(' '));
    assert.deepEqual(ledgerDump(cwd), ledgerBefore);
  }
  const fresh = await runDrover(['prelaunch', '+command', 'echo', '+jobname', 'new', '+pos-arg', '1'], {
    cwd,
  });
  assert.notEqual(fresh.code, 0);
  assert.equal(fs.existsSync(jobfileOf(cwd, 'new')), false);
  assert.equal(fs.existsSync(path.join(path.dirname(jobfileOf(cwd, 'new')), 'params.json')), false);
  assert.deepEqual(fs.readdirSync(path.dirname(jobfileOf(cwd, 'j'))).sort(), ['jobs.json', 'params.json']);
});
