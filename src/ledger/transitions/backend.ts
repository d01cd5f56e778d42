import type { State, TerminalState } from '../../protocol/states.js';
import { refreshLatest } from '../latest-attempt.js';
import type { Ledger } from '../ledger.js';
import { describeRefusal, isLegalMove } from '../moves.js';
import { APPLIED, countAttempt, type Outcome, refused, setTaskState, UNCHANGED } from './move.js';

/**
 * The transitions a backend makes from what it knows and the runners could not say: tasks it lost or that were
 * cancelled before a runner could say so, tasks it could not start, and why an attempt really ended. Each is one
 * transaction (joining the caller's when there is one), idempotent, and checked against the legal moves
 * (moves.ts).
 */

/**
 * Transition `markUnfinished`: the backend no longer knows these tasks and no final record exists
 * (queued/running → `state`, normally `lost`; `cancelled` when the user cancelled them). Running attempts end
 * with the same state; their end time stays unknown, so a late record from the runner may still say what really
 * happened. Returns the ids it changed.
 */
export function markUnfinished(
  ledger: Ledger,
  jobId: number,
  launchId: number,
  taskIds: readonly number[] | 'all',
  state: TerminalState,
  reason: string,
): number[] {
  if (!ledger.db.inTransaction)
    return ledger.write(() => markUnfinished(ledger, jobId, launchId, taskIds, state, reason));
  const rows = ledger
    .stmt("SELECT task_id, state FROM launch_tasks WHERE launch_id = ? AND state IN ('queued', 'running')")
    .all(launchId) as { task_id: number; state: State }[];
  const wanted = taskIds === 'all' ? undefined : new Set(taskIds);
  const changed: number[] = [];
  for (const { task_id, state: from } of rows) {
    if (wanted && !wanted.has(task_id)) continue;
    if (!isLegalMove(from, state)) {
      ledger.warnOnce(
        describeRefusal({ launch: launchId, task: task_id, from, to: state }, `marking it ${state}`),
      );
      continue;
    }
    ledger
      .stmt(
        'UPDATE attempts SET state = ?, reason = ? WHERE launch_id = ? AND task_id = ? AND ended_at IS NULL',
      )
      .run(state, reason, launchId, task_id);
    setTaskState(ledger, jobId, launchId, task_id, from, state, null);
    changed.push(task_id);
  }
  return changed;
}

/**
 * Transition `recordError`: the backend could not start a queued task (queued → error, e.g. Grid Engine's
 * `Eqw`). Records the attempt the backend tried, with no start and no end time and the backend's reason, so
 * `drover status` can say why and `--failed` reruns it as the next attempt. The end stays unknown (NULL): if the
 * scheduler runs the task after all, the runner's records still apply. Unchanged unless the task is queued in
 * the launch. Idempotent.
 */
export function recordError(
  ledger: Ledger,
  jobId: number,
  launchId: number,
  taskId: number,
  reason: string,
): Outcome {
  if (!ledger.db.inTransaction)
    return ledger.write(() => recordError(ledger, jobId, launchId, taskId, reason));
  const row = ledger
    .stmt('SELECT state FROM launch_tasks WHERE launch_id = ? AND task_id = ?')
    .get(launchId, taskId) as { state: State } | undefined;
  if (row?.state !== 'queued') return UNCHANGED;
  const next = ledger
    .stmt('SELECT coalesce(max(attempt), 0) + 1 AS n FROM attempts WHERE job_id = ? AND task_id = ?')
    .get(jobId, taskId) as { n: number };
  ledger
    .stmt(
      `INSERT INTO attempts (job_id, task_id, attempt, launch_id, state, reason) VALUES (?, ?, ?, ?, 'error', ?)
       ON CONFLICT DO NOTHING`,
    )
    .run(jobId, taskId, next.n, launchId, reason);
  countAttempt(ledger, jobId, launchId, taskId, next.n);
  setTaskState(ledger, jobId, launchId, taskId, 'queued', 'error', null);
  refreshLatest(ledger, jobId, taskId);
  return APPLIED;
}

/**
 * Transition `restateEnd`: the backend says why an ended attempt really ended (e.g. `killed` by a scheduler
 * stop → `timeout` when the scheduler's time limit was hit, or `cancelled` when the user had cancelled it).
 * Changes only an attempt still in state `from`; the task follows when it is the task's latest attempt in the
 * launch. Idempotent.
 */
export function restateEnd(
  ledger: Ledger,
  jobId: number,
  launchId: number,
  taskId: number,
  attempt: number,
  from: TerminalState,
  to: TerminalState,
  reason: string,
): Outcome {
  if (!ledger.db.inTransaction)
    return ledger.write(() => restateEnd(ledger, jobId, launchId, taskId, attempt, from, to, reason));
  const a = ledger
    .stmt(
      `SELECT a.state AS attempt_state, lt.state,
         (SELECT max(attempt) FROM attempts WHERE job_id = a.job_id AND task_id = a.task_id AND launch_id = a.launch_id) AS latest
       FROM attempts a LEFT JOIN launch_tasks lt ON lt.launch_id = a.launch_id AND lt.task_id = a.task_id
       WHERE a.job_id = ? AND a.task_id = ? AND a.attempt = ? AND a.launch_id = ?`,
    )
    .get(jobId, taskId, attempt, launchId) as
    | { attempt_state: State; state: State | null; latest: number }
    | undefined;
  if (a?.attempt_state !== from) return UNCHANGED;
  const moves = a.latest === attempt;
  if (moves && (a.state === null || !isLegalMove(a.state, to)))
    return refused(launchId, taskId, a.state ?? undefined, to);
  ledger
    .stmt(
      'UPDATE attempts SET state = ?, reason = ? WHERE job_id = ? AND task_id = ? AND attempt = ? AND launch_id = ?',
    )
    .run(to, reason, jobId, taskId, attempt, launchId);
  if (moves) setTaskState(ledger, jobId, launchId, taskId, a.state!, to);
  return APPLIED;
}
