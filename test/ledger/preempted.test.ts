import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyRecords } from '../../src/ledger/apply-records.js';
import { awaitRerun } from '../../src/ledger/transitions.js';
import type { EndRecord } from '../../src/protocol/records.js';
import { PREEMPTED, SCHEDULER_STOP } from '../../src/runner/reasons.js';
import {
  attemptRows,
  end,
  launch,
  launchState,
  makeJob,
  start,
  taskRow,
  tempLedger,
} from '../helpers/ledger.js';

/** An element stopped to run again (preemption, scontrol requeue): transitions/preempted.ts. */

const stopped = (task: number, attempt: number): EndRecord => ({
  ...end(task, attempt, 'killed', null),
  signal: 'SIGTERM',
  reason: SCHEDULER_STOP,
});

test('an element pending again queues its stopped task; its next runner requeues it, or ends it', (t) => {
  const ledger = tempLedger(t);
  const job = makeJob(ledger, 'J', 2);
  const l = launch(ledger, job, [1, 2]);
  applyRecords(ledger, l, [start(1, 1), stopped(1, 1), start(2, 1), stopped(2, 1)]);
  assert.equal(taskRow(ledger, job, 1).state, 'killed');

  // Reconciliation sees both elements pending again.
  for (const task of [1, 2])
    assert.equal(awaitRerun(ledger, job.id, l.id, task, 1, PREEMPTED).kind, 'applied');
  assert.equal(awaitRerun(ledger, job.id, l.id, 1, 1, PREEMPTED).kind, 'unchanged', 'once');
  assert.deepEqual([launchState(ledger, l.id, 1), taskRow(ledger, job, 1).state], ['queued', 'queued']);

  // Task 1's runner requeues it and runs attempt 2; task 2's has no requeue left: it is killed, preempted.
  applyRecords(ledger, l, [
    { type: 'preempted', task: 1, attempt: 1, at: 102, reason: PREEMPTED, requeue: true },
    start(1, 2, 103),
    end(1, 2, 'succeeded', 0, 104),
    {
      type: 'preempted',
      task: 2,
      attempt: 1,
      at: 102,
      reason: `${PREEMPTED}, no requeue left`,
      requeue: false,
    },
  ]);
  assert.equal(taskRow(ledger, job, 1).state, 'succeeded');
  assert.deepEqual(
    attemptRows(ledger, job, 1).map((a) => [a.attempt, a.state, a.reason]),
    [
      [1, 'killed', PREEMPTED],
      [2, 'succeeded', null],
    ],
  );
  assert.deepEqual([launchState(ledger, l.id, 2), taskRow(ledger, job, 2).state], ['killed', 'killed']);
  assert.equal(attemptRows(ledger, job, 2)[0]!.reason, `${PREEMPTED}, no requeue left`);
  const requeues = ledger.db
    .prepare('SELECT requeues FROM tasks WHERE job_id = ? ORDER BY id')
    .pluck()
    .all(job.id);
  assert.deepEqual(requeues, [1, 0]);

  // A replayed record changes nothing; one about a success changes nothing.
  applyRecords(ledger, l, [
    { type: 'preempted', task: 1, attempt: 1, at: 102, reason: PREEMPTED, requeue: true },
  ]);
  applyRecords(ledger, l, [
    { type: 'preempted', task: 1, attempt: 2, at: 105, reason: PREEMPTED, requeue: true },
  ]);
  assert.equal(taskRow(ledger, job, 1).state, 'succeeded');
  assert.deepEqual(
    ledger.db.prepare('SELECT requeues FROM tasks WHERE job_id = ? ORDER BY id').pluck().all(job.id),
    [1, 0],
  );
});
