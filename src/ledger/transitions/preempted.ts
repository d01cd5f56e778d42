import type { PreemptedRecord } from '../../protocol/records.js';
import type { State } from '../../protocol/states.js';
import { refreshLatest } from '../latest-attempt.js';
import type { Ledger } from '../ledger.js';
import { isLegalMove } from '../moves.js';
import { APPLIED, markAttemptRequeued, type Outcome, refused, setTaskState, UNCHANGED } from './move.js';

/** An ended attempt of a launch as the transitions below read it, with its task's state there and newest attempt. */
interface EndedAttempt {
  state: State;
  reason: string | null;
  requeued: number;
  in_launch: State | null;
  latest: number;
}

function endedAttempt(
  ledger: Ledger,
  jobId: number,
  launchId: number,
  task: number,
  attempt: number,
): EndedAttempt | undefined {
  return ledger
    .stmt(
      `SELECT a.state, a.reason, a.requeued, lt.state AS in_launch,
         (SELECT max(attempt) FROM attempts WHERE job_id = a.job_id AND task_id = a.task_id AND launch_id = a.launch_id) AS latest
       FROM attempts a LEFT JOIN launch_tasks lt ON lt.launch_id = a.launch_id AND lt.task_id = a.task_id
       WHERE a.job_id = ? AND a.task_id = ? AND a.attempt = ? AND a.launch_id = ? AND a.ended_at IS NOT NULL`,
    )
    .get(jobId, task, attempt, launchId) as EndedAttempt | undefined;
}

/** Give an attempt its reason. */
function setReason(
  ledger: Ledger,
  jobId: number,
  launchId: number,
  task: number,
  attempt: number,
  reason: string,
): void {
  ledger
    .stmt('UPDATE attempts SET reason = ? WHERE job_id = ? AND task_id = ? AND attempt = ? AND launch_id = ?')
    .run(reason, jobId, task, attempt, launchId);
}

/**
 * Transition `recordPreempted`: the scheduler stopped an attempt's array element and ran the element again
 * (records.ts PreemptedRecord). The attempt, ended `killed` or `lost` by that stop, keeps its state and takes the
 * record's reason; with `requeue` it is marked requeued (counted once on its task) and, while it is its task's
 * newest attempt in the launch, the task is `queued` for the next. Idempotent: a second record changes nothing.
 * Unchanged for an attempt the ledger does not have, one still open (its end comes as an `end` record) or one
 * that ended otherwise (a success, a failure: the stop did not end it).
 */
export function recordPreempted(
  ledger: Ledger,
  jobId: number,
  launchId: number,
  r: PreemptedRecord,
): Outcome {
  if (!ledger.db.inTransaction) return ledger.write(() => recordPreempted(ledger, jobId, launchId, r));
  const a = endedAttempt(ledger, jobId, launchId, r.task, r.attempt);
  if (!a || (a.state !== 'killed' && a.state !== 'lost')) return UNCHANGED;
  // Queued again for the next attempt; or, with no requeue, back to the attempt's end (reconciliation may have
  // queued it while the element waited to run again: awaitRerun).
  const to: State = r.requeue ? 'queued' : a.state;
  const moves = a.latest === r.attempt && a.in_launch !== to;
  if (a.reason === r.reason && a.requeued === (r.requeue ? 1 : 0) && !moves) return UNCHANGED;
  if (moves && (a.in_launch === null || !isLegalMove(a.in_launch, to)))
    return refused(launchId, r.task, a.in_launch ?? undefined, to);
  setReason(ledger, jobId, launchId, r.task, r.attempt, r.reason);
  if (r.requeue) markAttemptRequeued(ledger, jobId, launchId, r.task, r.attempt);
  if (moves) setTaskState(ledger, jobId, launchId, r.task, a.in_launch!, to);
  refreshLatest(ledger, jobId, r.task);
  return APPLIED;
}

/**
 * Transition `awaitRerun`: the scheduler holds the array element of a task's newest attempt, which its stop ended
 * (`killed`, `lost`), pending to run again (preemption, scontrol requeue): the attempt takes the reason
 * PREEMPTED and the task is `queued` until the element's next runner says how it goes on (recordPreempted).
 */
export function awaitRerun(
  ledger: Ledger,
  jobId: number,
  launchId: number,
  task: number,
  attempt: number,
  reason: string,
): Outcome {
  if (!ledger.db.inTransaction)
    return ledger.write(() => awaitRerun(ledger, jobId, launchId, task, attempt, reason));
  const a = endedAttempt(ledger, jobId, launchId, task, attempt);
  if (!a || a.latest !== attempt || (a.state !== 'killed' && a.state !== 'lost')) return UNCHANGED;
  if (a.in_launch !== a.state) return UNCHANGED;
  setReason(ledger, jobId, launchId, task, attempt, reason);
  setTaskState(ledger, jobId, launchId, task, a.in_launch, 'queued');
  refreshLatest(ledger, jobId, task);
  return APPLIED;
}
