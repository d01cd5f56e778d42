import type { AttemptRecord } from '../../protocol/records.js';
import { type Applied, applyRecords } from '../apply-records.js';
import { refreshLatest } from '../latest-attempt.js';
import type { Ledger } from '../ledger.js';
import { markUnfinished } from './backend.js';
import { expandAll } from './expand.js';
import {
  APPLIED,
  countAttempt,
  followInTask,
  markAttemptRequeued,
  moveInLaunch,
  type Outcome,
  UNCHANGED,
} from './move.js';

/**
 * The controller's transitions of pool launches. Pool launches use the same tables and record transitions as
 * direct launches; pool_tasks holds only the tasks handed to a worker (held) or waiting to retry (no worker).
 * Each is one transaction (joining the caller's when there is one) and checked against the legal moves.
 */

/**
 * Transition `assignTask`: hand a task queued in its launch to a worker (it stays `queued` until its start
 * is reported). Unchanged when the task is no longer queued (cancelled meanwhile, say).
 */
export function assignTask(
  ledger: Ledger,
  launchId: number,
  t: { task: number; attempt: number; tries: number },
  worker: string,
): Outcome {
  if (!ledger.db.inTransaction) return ledger.write(() => assignTask(ledger, launchId, t, worker));
  const info = ledger
    .stmt(
      `INSERT INTO pool_tasks (launch_id, task_id, attempt, tries, worker, not_before)
       SELECT ?, ?, ?, ?, ?, 0 FROM launch_tasks WHERE launch_id = ? AND task_id = ? AND state = 'queued'
       ON CONFLICT (launch_id, task_id) DO UPDATE SET attempt = excluded.attempt, tries = excluded.tries,
         worker = excluded.worker, not_before = 0`,
    )
    .run(launchId, t.task, t.attempt, t.tries, worker, launchId, t.task);
  if (info.changes === 0) return UNCHANGED;
  ledger.stmt('UPDATE pool_launches SET cursor = max(cursor, ?) WHERE launch_id = ?').run(t.task, launchId);
  return APPLIED;
}

/**
 * Transition `requeueForRetry`: a task's attempt ended and it is tried again later as attempt `nextAttempt`
 * (its end state → `queued`), not before `notBefore` (unix s).
 */
export function requeueForRetry(
  ledger: Ledger,
  jobId: number,
  launchId: number,
  taskId: number,
  nextAttempt: number,
  notBefore: number,
): Outcome {
  if (!ledger.db.inTransaction)
    return ledger.write(() => requeueForRetry(ledger, jobId, launchId, taskId, nextAttempt, notBefore));
  const no = moveInLaunch(ledger, launchId, taskId, 'queued');
  if (no) return { kind: 'refused', move: no };
  ledger
    .stmt(
      'UPDATE pool_tasks SET worker = NULL, attempt = ?, not_before = ? WHERE launch_id = ? AND task_id = ?',
    )
    .run(nextAttempt, notBefore, launchId, taskId);
  followInTask(ledger, jobId, launchId, taskId, 'queued');
  return APPLIED;
}

/**
 * Transition `requeueQueued`: a task whose attempt's end record queued it again (`--requeue`: the controller
 * marked it so) waits to be handed out as `nextAttempt`, at once; its state is already `queued`.
 */
export function requeueQueued(
  ledger: Ledger,
  launchId: number,
  taskId: number,
  nextAttempt: number,
): Outcome {
  if (!ledger.db.inTransaction)
    return ledger.write(() => requeueQueued(ledger, launchId, taskId, nextAttempt));
  const info = ledger
    .stmt(
      'UPDATE pool_tasks SET worker = NULL, attempt = ?, not_before = 0 WHERE launch_id = ? AND task_id = ?',
    )
    .run(nextAttempt, launchId, taskId);
  return info.changes > 0 ? APPLIED : UNCHANGED;
}

/**
 * Transition `markRequeued`: an attempt that ended without an end record of its own (its worker was lost) is
 * run again by `--requeue`: it is marked so and its task counts the requeue, as an end record's `requeue` does.
 */
export function markRequeued(
  ledger: Ledger,
  jobId: number,
  launchId: number,
  taskId: number,
  attempt: number,
): Outcome {
  if (!ledger.db.inTransaction)
    return ledger.write(() => markRequeued(ledger, jobId, launchId, taskId, attempt));
  return markAttemptRequeued(ledger, jobId, launchId, taskId, attempt) ? APPLIED : UNCHANGED;
}

/** Transition `unassign`: a task handed to a worker that never started it waits again (same attempt). */
export function unassign(ledger: Ledger, launchId: number, taskId: number): Outcome {
  if (!ledger.db.inTransaction) return ledger.write(() => unassign(ledger, launchId, taskId));
  const info = ledger
    .stmt('UPDATE pool_tasks SET worker = NULL, not_before = 0 WHERE launch_id = ? AND task_id = ?')
    .run(launchId, taskId);
  return info.changes > 0 ? APPLIED : UNCHANGED;
}

/**
 * Transition `loseUnreported`: a task handed to a worker that was lost before it reported the attempt's start.
 * The worker may have started it (killed between the two), so the attempt is recorded `lost`, its start
 * unknown, on the worker's host: an attempt number that ran is never given to another run. The task stays
 * `queued` and waits to be handed out again at once as the next attempt (it may never have run: no retry policy
 * is asked). Unchanged when the attempt is recorded already or the task is no longer held.
 */
export function loseUnreported(
  ledger: Ledger,
  jobId: number,
  launchId: number,
  t: { task: number; attempt: number; host: string; at: number; reason: string },
): Outcome {
  if (!ledger.db.inTransaction) return ledger.write(() => loseUnreported(ledger, jobId, launchId, t));
  const held = ledger
    .stmt(
      `SELECT 1 FROM pool_tasks p JOIN launch_tasks lt ON lt.launch_id = p.launch_id AND lt.task_id = p.task_id
       WHERE p.launch_id = ? AND p.task_id = ? AND p.attempt = ? AND lt.state = 'queued'`,
    )
    .get(launchId, t.task, t.attempt);
  if (!held) return UNCHANGED;
  const info = ledger
    .stmt(
      `INSERT INTO attempts (job_id, task_id, attempt, launch_id, state, ended_at, host, reason)
       VALUES (?, ?, ?, ?, 'lost', ?, ?, ?) ON CONFLICT DO NOTHING`,
    )
    .run(jobId, t.task, t.attempt, launchId, t.at, t.host, t.reason);
  if (info.changes === 0) return UNCHANGED;
  countAttempt(ledger, jobId, launchId, t.task, t.attempt);
  refreshLatest(ledger, jobId, t.task);
  ledger
    .stmt(
      'UPDATE pool_tasks SET worker = NULL, attempt = ?, not_before = 0 WHERE launch_id = ? AND task_id = ?',
    )
    .run(t.attempt + 1, launchId, t.task);
  return APPLIED;
}

/** Transition `finishTask`: a task is done in its pool launch (its last attempt's state stands). */
export function finishTask(ledger: Ledger, launchId: number, taskId: number): Outcome {
  if (!ledger.db.inTransaction) return ledger.write(() => finishTask(ledger, launchId, taskId));
  const info = ledger
    .stmt('DELETE FROM pool_tasks WHERE launch_id = ? AND task_id = ?')
    .run(launchId, taskId);
  return info.changes > 0 ? APPLIED : UNCHANGED;
}

/** Transition `markLost`: a started attempt whose worker went silent or lost it is `lost` (markUnfinished). */
export function markLost(
  ledger: Ledger,
  jobId: number,
  launchId: number,
  taskId: number,
  reason: string,
): Outcome {
  return markUnfinished(ledger, jobId, launchId, [taskId], 'lost', reason).length > 0 ? APPLIED : UNCHANGED;
}

/**
 * Transition `closePoolLaunchIfDone`: close a pool launch (open → 0) when it is fully expanded and none of its
 * tasks is queued or running. Returns whether it closed.
 */
export function closePoolLaunchIfDone(ledger: Ledger, launchId: number): boolean {
  if (!ledger.db.inTransaction) return ledger.write(() => closePoolLaunchIfDone(ledger, launchId));
  const pl = ledger.stmt('SELECT total FROM pool_launches WHERE launch_id = ?').get(launchId) as
    | { total: number }
    | undefined;
  if (!pl) return false;
  const made = ledger.stmt('SELECT count(*) AS n FROM launch_tasks WHERE launch_id = ?').get(launchId) as {
    n: number;
  };
  if (made.n < pl.total) return false;
  const left = ledger
    .stmt("SELECT count(*) AS n FROM launch_tasks WHERE launch_id = ? AND state IN ('queued', 'running')")
    .get(launchId) as { n: number };
  if (left.n > 0) return false;
  ledger.stmt('UPDATE launches SET open = 0 WHERE id = ?').run(launchId);
  return true;
}

/**
 * Transition `cancelPoolTasks`: the tasks of a pool launch that no worker holds (queued, or waiting to retry)
 * become `cancelled`, and a cancel request is left for the controller to stop the others on their workers.
 * Returns the ids cancelled at once.
 */
export function cancelPoolTasks(
  ledger: Ledger,
  launch: { id: number; job_id: number },
  tasks: readonly number[] | 'all',
): number[] {
  if (!ledger.db.inTransaction) return ledger.write(() => cancelPoolTasks(ledger, launch, tasks));
  expandAll(ledger, launch.id);
  const wanted = tasks === 'all' ? undefined : new Set(tasks);
  const held = new Set(
    ledger
      .stmt('SELECT task_id FROM pool_tasks WHERE launch_id = ? AND worker IS NOT NULL')
      .pluck()
      .all(launch.id) as number[],
  );
  const free = (
    ledger
      .stmt("SELECT task_id FROM launch_tasks WHERE launch_id = ? AND state = 'queued'")
      .pluck()
      .all(launch.id) as number[]
  ).filter((id) => !held.has(id) && (!wanted || wanted.has(id)));
  const done = markUnfinished(ledger, launch.job_id, launch.id, free, 'cancelled', 'cancelled by the user');
  ledger
    .stmt(
      'DELETE FROM pool_tasks WHERE launch_id = ? AND worker IS NULL AND task_id IN (SELECT value FROM json_each(?))',
    )
    .run(launch.id, JSON.stringify(done));
  ledger
    .stmt('INSERT INTO pool_cancels (launch_id, tasks, at) VALUES (?, ?, ?)')
    .run(launch.id, JSON.stringify(tasks), Date.now() / 1000);
  return done;
}

/**
 * Apply one launch's records from a pool worker: the one ingestion path (applyRecords), plus the pool's own
 * count of the attempts started in the launch. One transaction, idempotent; the caller checked that every
 * record is of an attempt the worker holds (controller/report-check.ts).
 */
export function applyWorkerRecords(
  ledger: Ledger,
  launch: { id: number; job_id: number },
  records: readonly AttemptRecord[],
): Applied {
  if (!ledger.db.inTransaction) return ledger.write(() => applyWorkerRecords(ledger, launch, records));
  const out = applyRecords(ledger, launch, records);
  for (const s of out.started) {
    ledger
      .stmt('UPDATE pool_tasks SET tries = tries + 1 WHERE launch_id = ? AND task_id = ? AND attempt = ?')
      .run(launch.id, s.task, s.attempt);
  }
  return out;
}
