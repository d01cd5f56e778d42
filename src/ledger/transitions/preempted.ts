import type { PreemptedRecord } from '../../protocol/records.js';
import type { State } from '../../protocol/states.js';
import { refreshLatest } from '../latest-attempt.js';
import type { Ledger } from '../ledger.js';
import { isLegalMove } from '../moves.js';
import { APPLIED, markAttemptRequeued, type Outcome, refused, setTaskState, UNCHANGED } from './move.js';

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
  const a = ledger
    .stmt(
      `SELECT a.state, a.reason, a.requeued, lt.state AS in_launch,
         (SELECT max(attempt) FROM attempts WHERE job_id = a.job_id AND task_id = a.task_id AND launch_id = a.launch_id) AS latest
       FROM attempts a LEFT JOIN launch_tasks lt ON lt.launch_id = a.launch_id AND lt.task_id = a.task_id
       WHERE a.job_id = ? AND a.task_id = ? AND a.attempt = ? AND a.launch_id = ? AND a.ended_at IS NOT NULL`,
    )
    .get(jobId, r.task, r.attempt, launchId) as
    | { state: State; reason: string | null; requeued: number; in_launch: State | null; latest: number }
    | undefined;
  if (!a || (a.state !== 'killed' && a.state !== 'lost')) return UNCHANGED;
  if (a.reason === r.reason && a.requeued === (r.requeue ? 1 : 0)) return UNCHANGED;
  const moves = r.requeue && a.latest === r.attempt && a.in_launch !== 'queued';
  if (moves && (a.in_launch === null || !isLegalMove(a.in_launch, 'queued')))
    return refused(launchId, r.task, a.in_launch ?? undefined, 'queued');
  ledger
    .stmt('UPDATE attempts SET reason = ? WHERE job_id = ? AND task_id = ? AND attempt = ? AND launch_id = ?')
    .run(r.reason, jobId, r.task, r.attempt, launchId);
  if (r.requeue) markAttemptRequeued(ledger, jobId, launchId, r.task, r.attempt);
  if (moves) setTaskState(ledger, jobId, launchId, r.task, a.in_launch!, 'queued');
  refreshLatest(ledger, jobId, r.task);
  return APPLIED;
}
