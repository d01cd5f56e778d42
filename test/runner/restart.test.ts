import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { ingestLaunch, recordsDir } from '../../src/ledger/ingest.js';
import { inRunOrder } from '../../src/protocol/record-files.js';
import type { AttemptRecord } from '../../src/protocol/records.js';
import { PREEMPTED, SCHEDULER_STOP } from '../../src/runner/reasons.js';
import { planRestart, seenTasks } from '../../src/runner/restart.js';
import { shortHostname } from '../../src/util/proc.js';
import { startDrover } from '../helpers/drover.js';
import { attemptRows, end, launch, makeJob, start, taskRow, tempLedger } from '../helpers/ledger.js';
import { isAlive, killGroup, waitFor } from '../helpers/workspace.js';
import { makeLaunch } from './runner-harness.js';
import { writeLaunchFile } from './runners.js';

/**
 * An array element the scheduler runs again (preemption, `scontrol requeue`, `qmod -rj`) starts drover's runner
 * again on the same group: it goes on from what the element's earlier runs recorded (src/runner/restart.ts).
 */

const AT = 500;
const killed = (task: number, attempt: number): AttemptRecord => ({
  ...end(task, attempt, 'killed', null),
  signal: 'SIGTERM',
  reason: SCHEDULER_STOP,
});

test('the plan of a run after the first, for each thing an earlier run can leave of a task', () => {
  const seen = seenTasks([
    start(1, 1),
    killed(1, 1), // stopped by the scheduler's SIGTERM: preempted
    start(2, 1),
    end(2, 1, 'succeeded', 0), // done
    start(3, 1), // no end: the runner died with it
    start(4, 1),
    { ...end(4, 1, 'failed', 1), retry: true }, // its retry never started
    { type: 'skip', task: 5, at: 1, state: 'cancelled' },
    start(6, 2),
    { ...end(6, 2, 'timeout', null), requeue: true }, // its requeue never started
    start(7, 1),
    killed(7, 1),
    { type: 'preempted', task: 7, attempt: 1, at: 2, reason: PREEMPTED, requeue: true }, // said before
    start(8, 1),
    { ...end(8, 1, 'killed', null), signal: 'SIGTERM' }, // died of Slurm's SIGTERM before its runner stopped it
    start(9, 1),
    { ...end(9, 1, 'killed', null), signal: 'SIGKILL' }, // killed by something else (the OOM killer): done
  ]);
  const plan = planRestart(seen, 1, AT);
  assert.deepEqual(Object.fromEntries(plan.next), {
    1: { attempt: 2, retry: 0, requeues: 1 },
    2: null,
    3: { attempt: 2, retry: 0, requeues: 1 },
    4: { attempt: 2, retry: 1, requeues: 0 },
    5: null,
    6: { attempt: 3, retry: 0, requeues: 1 },
    7: { attempt: 2, retry: 0, requeues: 1 },
    8: { attempt: 2, retry: 0, requeues: 1 },
    9: null,
  });
  assert.deepEqual(plan.records, [
    { type: 'preempted', task: 1, attempt: 1, at: AT, reason: PREEMPTED, requeue: true },
    {
      type: 'end',
      task: 3,
      attempt: 1,
      at: AT,
      state: 'lost',
      exit_code: null,
      signal: null,
      reason: PREEMPTED,
      requeue: true,
    },
    { type: 'preempted', task: 8, attempt: 1, at: AT, reason: PREEMPTED, requeue: true },
  ]);
  assert.deepEqual(plan.ended, []);
  assert.deepEqual(
    inRunOrder(['g1.r2.h.1.jsonl', 'g1.h.5.jsonl', 'g2.h.3.jsonl', 'g1.r1.h.2.jsonl', 'g10.h.4.jsonl']),
    ['g1.h.5.jsonl', 'g2.h.3.jsonl', 'g10.h.4.jsonl', 'g1.r1.h.2.jsonl', 'g1.r2.h.1.jsonl'],
    'ingest reads the files of a run after those of the runs before',
  );

  // No --requeue: the stopped attempts are said preempted and end there; a requeue already used up counts.
  const none = planRestart(seen, 0, AT);
  assert.deepEqual(
    [none.next.get(1), none.next.get(3), none.next.get(4)],
    [null, null, { attempt: 2, retry: 1, requeues: 0 }],
  );
  assert.deepEqual(
    none.records.map((r) => [r.type, 'reason' in r ? r.reason : '', 'requeue' in r ? r.requeue : undefined]),
    [
      ['preempted', PREEMPTED, false],
      ['end', PREEMPTED, undefined],
      ['preempted', PREEMPTED, false],
    ],
  );
  assert.deepEqual(none.ended, ['killed', 'lost', 'killed']);
  const spent = planRestart(
    seenTasks([start(1, 1), { ...end(1, 1, 'failed', 75), requeue: true }, start(1, 2), killed(1, 2)]),
    1,
    AT,
  );
  assert.equal(spent.next.get(1), null);
  assert.deepEqual(spent.records, [
    {
      type: 'preempted',
      task: 1,
      attempt: 2,
      at: AT,
      reason: `${PREEMPTED}, no requeue left (--requeue 1)`,
      requeue: false,
    },
  ]);
});

/** A task that sleeps until stopped, and on a resumed run says so and succeeds. */
const RESUMES =
  'if [ "$DROVER_RESUME" = 1 ]; then echo "resumed as attempt $DROVER_ATTEMPT"; exit 0; fi; echo working; exec sleep 60';

test('an element run again requeues what the stop cut, once, and never runs an attempt twice', async (t) => {
  const l = makeLaunch(t, {
    // Task 3 ignores SIGTERM: its runner's stop takes the kill grace (SIGKILL after 1 s).
    commands: [RESUMES, 'true', 'trap "" TERM; exec sleep 60'],
    settings: { requeue: 1, maxTasks: 3 },
  });
  const file = writeLaunchFile(l);
  const dir = l.settings.recordsDir;
  const records = () =>
    fs
      .readdirSync(dir)
      .flatMap((f) => fs.readFileSync(path.join(dir, f), 'utf8').split('\n').filter(Boolean))
      .map((line) => JSON.parse(line) as AttemptRecord);
  const has = (p: (r: AttemptRecord) => boolean) => records().some(p);
  const runElement = () => startDrover(['runner', file, '--group', '1'], { cwd: l.dir });
  const taskPids: number[] = [];
  t.after(() => {
    for (const pid of taskPids) killGroup(pid);
  });

  // Run 1: stopped as a scheduler stops an element it requeues (SIGTERM) while tasks 1 and 3 run.
  const first = runElement();
  await waitFor(
    'tasks 1 and 3 running, task 2 done',
    () =>
      has((r) => r.type === 'start' && r.task === 1) &&
      has((r) => r.type === 'start' && r.task === 3) &&
      has((r) => r.type === 'end' && r.task === 2),
  );
  first.child.kill('SIGTERM');
  // Run 2 starts while run 1 still stops its tasks (as Grid Engine may start it): it waits for run 1's runner.
  const second = runElement();
  await first.result;
  const stopped = records().filter((r) => r.type === 'end' && r.attempt === 1 && r.task !== 2);
  assert.deepEqual(
    stopped.map((r) => r.type === 'end' && [r.task, r.state, r.reason]),
    [
      [1, 'killed', SCHEDULER_STOP],
      [3, 'killed', SCHEDULER_STOP],
    ],
  );

  // Run 2: task 1 resumes and succeeds; task 3 runs again (its one requeue) and the runner is killed outright.
  await waitFor(
    'task 1 resumed and task 3 running again',
    () =>
      has((r) => r.type === 'end' && r.task === 1 && r.attempt === 2) &&
      has((r) => r.type === 'start' && r.task === 3 && r.attempt === 2),
  );
  const again = records().find((r) => r.type === 'start' && r.task === 3 && r.attempt === 2);
  assert.ok(again?.type === 'start');
  taskPids.push(again.pid);
  second.child.kill('SIGKILL');
  await second.result;
  killGroup(again.pid); // as the scheduler kills what an element leaves
  await waitFor('task 3 gone', () => !isAlive(again.pid));

  // Run 3: task 3 has no requeue left: its open attempt ends lost, preempted; nothing runs.
  const third = runElement();
  assert.equal((await third.result).code, 1);

  const host = shortHostname();
  const files = inRunOrder(fs.readdirSync(dir).sort());
  assert.deepEqual(
    files.map((f) => f.replace(/\.\d+\.jsonl$/, '')),
    [`g1.${host}`, `g1.r1.${host}`, `g1.r2.${host}`],
    'each run of the element writes its own file, numbered by its run',
  );
  const starts = records().filter((r) => r.type === 'start');
  assert.deepEqual(
    starts.map((r) => `${r.task}.${r.attempt}`).sort(),
    ['1.1', '1.2', '2.1', '3.1', '3.2'],
    'no attempt started twice, none after the requeue ran out',
  );
  const out = fs.readFileSync(
    (starts.find((r) => r.type === 'start' && r.task === 1 && r.attempt === 2) as { out: string }).out,
    'utf8',
  );
  assert.equal(out, 'resumed as attempt 2\n');

  // The ledger reads the three files in the order of their runs, whatever order the folder lists them in.
  const ledger = tempLedger(t);
  const job = makeJob(ledger, 'J', 3);
  const row = launch(ledger, job, [1, 2, 3]);
  fs.mkdirSync(recordsDir(row), { recursive: true });
  for (const f of [...files].reverse()) fs.copyFileSync(path.join(dir, f), path.join(recordsDir(row), f));
  ingestLaunch(ledger, row);
  assert.equal(taskRow(ledger, job, 1).state, 'succeeded');
  assert.equal(taskRow(ledger, job, 2).state, 'succeeded');
  assert.equal(taskRow(ledger, job, 3).state, 'lost');
  const brief = (task: number) => attemptRows(ledger, job, task).map((a) => [a.attempt, a.state, a.reason]);
  assert.deepEqual(brief(1), [
    [1, 'killed', PREEMPTED],
    [2, 'succeeded', null],
  ]);
  assert.deepEqual(brief(3), [
    [1, 'killed', PREEMPTED],
    [2, 'lost', `${PREEMPTED}, no requeue left (--requeue 1)`],
  ]);
  const requeues = ledger.db
    .prepare('SELECT id, requeues FROM tasks WHERE job_id = ? ORDER BY id')
    .all(job.id)
    .map((r) => (r as { requeues: number }).requeues);
  assert.deepEqual(requeues, [1, 0, 1]);
});
