import { STATES, type State } from '../../protocol/states.js';
import type { Ledger } from '../ledger.js';
import { isLegalMove, type RefusedMove, sourcesOf } from '../moves.js';

/**
 * What every transition shares: its typed outcome, and the one way a task's state changes — checked against
 * the table of legal moves (moves.ts), in the launch and, when the launch is the task's newest, in the task.
 *
 * Each transition is one transaction, joining the caller's when one is open. It opens with
 * `if (!ledger.db.inTransaction) return ledger.write(() => itself(...))`, so that applying a batch of records
 * (thousands of transitions in the caller's one transaction) allocates no wrapper per transition.
 */

/** What a transition did. */
export type Outcome =
  /** It changed the ledger. */
  | { kind: 'applied' }
  /** Nothing to do: it was applied before (transitions are idempotent), or what it acts on is not there. */
  | { kind: 'unchanged' }
  /** It was asked for a move the table does not allow, or of a task the launch does not have: nothing written. */
  | { kind: 'refused'; move: RefusedMove };

export const APPLIED: Outcome = { kind: 'applied' };
export const UNCHANGED: Outcome = { kind: 'unchanged' };

/** The refusal of a move, as an outcome. */
export function refused(launch: number, task: number, from: State | undefined, to: State): Outcome {
  return { kind: 'refused', move: { launch, task, from, to } };
}

/** The task's state in a launch, or undefined when the launch does not have it. */
export function stateInLaunch(ledger: Ledger, launchId: number, taskId: number): State | undefined {
  return (
    ledger.stmt('SELECT state FROM launch_tasks WHERE launch_id = ? AND task_id = ?').get(launchId, taskId) as
      | { state: State }
      | undefined
  )?.state;
}

/**
 * The move's check as SQL, per target state: the update changes the row only from a state it may leave for
 * `to`. Written as the few states it may not come from (`state <> 'succeeded' AND ...`): SQLite compares those
 * directly, where a list of the many allowed ones (`state IN (...)`) costs an ephemeral table per run.
 */
const GUARDED = new Map<State, string>(
  STATES.map((to) => {
    const sources = sourcesOf(to);
    const never = STATES.filter((s) => !sources.includes(s)).map((s) => `state <> '${s}'`);
    const check = never.length > 0 ? ` AND ${never.join(' AND ')}` : '';
    return [to, `UPDATE launch_tasks SET state = ? WHERE launch_id = ? AND task_id = ?${check}`];
  }),
);

/**
 * Move a task's state within a launch to `to` if the table allows it from the state it is in (one statement:
 * the check is the update's condition). Returns the refusal, having written nothing, when it does not, or
 * when the launch has no such task.
 */
export function moveInLaunch(
  ledger: Ledger,
  launchId: number,
  taskId: number,
  to: State,
): RefusedMove | undefined {
  if (ledger.stmt(GUARDED.get(to)!).run(to, launchId, taskId).changes > 0) return undefined;
  return { launch: launchId, task: taskId, from: stateInLaunch(ledger, launchId, taskId), to };
}

/**
 * Set a task's state within a launch whose move the caller checked (`from` is what it read in this
 * transaction), and the task's own when this launch is its newest (with its exit code, when given).
 */
export function setTaskState(
  ledger: Ledger,
  jobId: number,
  launchId: number,
  taskId: number,
  from: State,
  to: State,
  exitCode?: number | null,
): void {
  if (!isLegalMove(from, to)) throw new Error(`internal: unchecked move ${from} → ${to}`);
  ledger
    .stmt('UPDATE launch_tasks SET state = ? WHERE launch_id = ? AND task_id = ?')
    .run(to, launchId, taskId);
  followInTask(ledger, jobId, launchId, taskId, to, exitCode);
}

/** The task's own state follows its state in `launchId` when that launch is its newest. */
export function followInTask(
  ledger: Ledger,
  jobId: number,
  launchId: number,
  taskId: number,
  to: State,
  exitCode?: number | null,
): void {
  if (exitCode === undefined) {
    ledger
      .stmt('UPDATE tasks SET state = ? WHERE job_id = ? AND id = ? AND last_launch_id = ?')
      .run(to, jobId, taskId, launchId);
  } else {
    ledger
      .stmt('UPDATE tasks SET state = ?, exit_code = ? WHERE job_id = ? AND id = ? AND last_launch_id = ?')
      .run(to, exitCode, jobId, taskId, launchId);
  }
}

/**
 * Count a new attempt: attempt numbers keep rising per task id across its commands; `tries` counts the attempts
 * of its current command, which only launches of that command (the task's newest launch) add to.
 */
export function countAttempt(
  ledger: Ledger,
  jobId: number,
  launchId: number,
  taskId: number,
  attempt: number,
): void {
  ledger
    .stmt(
      'UPDATE tasks SET attempts = max(attempts, ?), tries = tries + (last_launch_id IS ?) WHERE job_id = ? AND id = ?',
    )
    .run(attempt, launchId, jobId, taskId);
}

/** Forget an attempt row this transaction just inserted (its move was refused: nothing is written). */
export function unInsertAttempt(ledger: Ledger, jobId: number, taskId: number, attempt: number): void {
  ledger
    .stmt('DELETE FROM attempts WHERE job_id = ? AND task_id = ? AND attempt = ?')
    .run(jobId, taskId, attempt);
}

/**
 * Mark an attempt as one `--requeue` ran again, and count it on its task — once: nothing when it was marked
 * already; and only while the task still has the command that launch ran (invariant 1: an earlier command's
 * attempts never count for the new one). `inserted`: its row was just inserted with the mark (attemptValues),
 * only the count is left. Returns whether it marked.
 */
export function markAttemptRequeued(
  ledger: Ledger,
  jobId: number,
  launchId: number,
  taskId: number,
  attempt: number,
  inserted = false,
): boolean {
  if (!inserted) {
    const info = ledger
      .stmt(
        'UPDATE attempts SET requeued = 1 WHERE job_id = ? AND task_id = ? AND attempt = ? AND launch_id = ? AND requeued = 0',
      )
      .run(jobId, taskId, attempt, launchId);
    if (info.changes === 0) return false;
  }
  ledger
    .stmt(
      `UPDATE tasks SET requeues = requeues + 1 WHERE job_id = ? AND id = ?
         AND revision = (SELECT revision FROM launch_tasks WHERE launch_id = ? AND task_id = ?)`,
    )
    .run(jobId, taskId, launchId, taskId);
  return true;
}
