import type { EndRecord, SkipRecord, StartRecord } from '../runner/records.js';
import type { Ledger } from './ledger.js';
import type { State, TerminalState } from './states.js';

/**
 * The named state transitions of tasks within a launch. Each updates the attempt, the task's state in the launch
 * and, when this launch is the task's newest, the task itself. Callers wrap them in a transaction (`ledger.write`).
 */

function setTaskState(
  ledger: Ledger,
  jobId: number,
  launchId: number,
  taskId: number,
  state: State,
  exitCode?: number | null,
): void {
  ledger
    .stmt('UPDATE launch_tasks SET state = ? WHERE launch_id = ? AND task_id = ?')
    .run(state, launchId, taskId);
  if (exitCode === undefined) {
    ledger
      .stmt('UPDATE tasks SET state = ? WHERE job_id = ? AND id = ? AND last_launch_id = ?')
      .run(state, jobId, taskId, launchId);
  } else {
    ledger
      .stmt('UPDATE tasks SET state = ?, exit_code = ? WHERE job_id = ? AND id = ? AND last_launch_id = ?')
      .run(state, exitCode, jobId, taskId, launchId);
  }
}

/**
 * Count a new attempt: attempt numbers keep rising per task id across its commands; `tries` counts the attempts
 * of its current command, which only launches of that command (the task's newest launch) add to.
 */
function countAttempt(
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

/** Transition: an attempt started (queued → running). Idempotent. */
export function recordStart(ledger: Ledger, jobId: number, launchId: number, r: StartRecord): void {
  const info = ledger
    .stmt(
      `INSERT INTO attempts (job_id, task_id, attempt, launch_id, state, started_at, host, slot, gpus, pid, stdout_path, stderr_path)
       VALUES (?, ?, ?, ?, 'running', ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
    )
    .run(jobId, r.task, r.attempt, launchId, r.at, r.host, r.slot, r.gpus, r.pid, r.out, r.err);
  if (info.changes === 0) return;
  countAttempt(ledger, jobId, launchId, r.task, r.attempt);
  ledger
    .stmt('UPDATE launches SET first_start = min(coalesce(first_start, ?), ?) WHERE id = ?')
    .run(r.at, r.at, launchId);
  setTaskState(ledger, jobId, launchId, r.task, 'running', null);
}

/**
 * Transition: an attempt ended (running → a terminal state), with its exit code or signal. Idempotent. Returns
 * false when the ledger has no such attempt still open (already ended, or its start was never recorded).
 */
export function recordEnd(ledger: Ledger, jobId: number, launchId: number, r: EndRecord): boolean {
  const info = ledger
    .stmt(
      `UPDATE attempts SET state = ?, exit_code = ?, signal = ?, ended_at = ?, reason = ?
       WHERE job_id = ? AND task_id = ? AND attempt = ? AND launch_id = ? AND ended_at IS NULL`,
    )
    .run(r.state, r.exit_code, r.signal, r.at, r.reason ?? null, jobId, r.task, r.attempt, launchId);
  if (info.changes === 0) return false;
  ledger
    .stmt(
      `UPDATE launches SET last_end = max(coalesce(last_end, ?), ?),
       busy = busy + coalesce(? - (SELECT started_at FROM attempts WHERE job_id = ? AND task_id = ? AND attempt = ?), 0)
       WHERE id = ?`,
    )
    .run(r.at, r.at, r.at, jobId, r.task, r.attempt, launchId);
  const latest = ledger
    .stmt('SELECT max(attempt) AS a FROM attempts WHERE job_id = ? AND task_id = ? AND launch_id = ?')
    .get(jobId, r.task, launchId) as { a: number };
  if (latest.a === r.attempt) setTaskState(ledger, jobId, launchId, r.task, taskStateAfter(r), r.exit_code);
  return true;
}

/**
 * Transition: an attempt ended whose start record is missing (its line in the record file was damaged): the
 * attempt is recorded with its end and an unknown start, so the task's state is what its runner said, not
 * `lost`. Only for a task of this launch; idempotent. Returns whether it recorded the attempt.
 */
export function recordEndWithoutStart(
  ledger: Ledger,
  jobId: number,
  launchId: number,
  r: EndRecord,
): boolean {
  if (!ledger.stmt('SELECT 1 FROM launch_tasks WHERE launch_id = ? AND task_id = ?').get(launchId, r.task))
    return false;
  const info = ledger
    .stmt(
      `INSERT INTO attempts (job_id, task_id, attempt, launch_id, state, exit_code, signal, ended_at, reason)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
    )
    .run(jobId, r.task, r.attempt, launchId, r.state, r.exit_code, r.signal, r.at, r.reason ?? null);
  if (info.changes === 0) return false;
  countAttempt(ledger, jobId, launchId, r.task, r.attempt);
  ledger
    .stmt('UPDATE launches SET last_end = max(coalesce(last_end, ?), ?) WHERE id = ?')
    .run(r.at, r.at, launchId);
  const latest = ledger
    .stmt('SELECT max(attempt) AS a FROM attempts WHERE job_id = ? AND task_id = ? AND launch_id = ?')
    .get(jobId, r.task, launchId) as { a: number };
  if (latest.a === r.attempt) setTaskState(ledger, jobId, launchId, r.task, taskStateAfter(r), r.exit_code);
  return true;
}

/** Transition: a task was cancelled while not running: queued, or waiting to retry (→ cancelled). */
export function recordSkip(ledger: Ledger, jobId: number, launchId: number, r: SkipRecord): void {
  const row = ledger
    .stmt('SELECT state FROM launch_tasks WHERE launch_id = ? AND task_id = ?')
    .get(launchId, r.task) as { state: State } | undefined;
  if (row && row.state !== 'running' && row.state !== 'succeeded')
    setTaskState(ledger, jobId, launchId, r.task, 'cancelled');
}

/**
 * Transition: the backend no longer knows these tasks and no final record exists (queued/running → `state`,
 * normally `lost`; `cancelled` when the user cancelled them). Running attempts end with the same state.
 */
export function markUnfinished(
  ledger: Ledger,
  jobId: number,
  launchId: number,
  taskIds: readonly number[] | 'all',
  state: TerminalState,
  reason: string,
): number[] {
  const rows = ledger
    .stmt("SELECT task_id FROM launch_tasks WHERE launch_id = ? AND state IN ('queued', 'running')")
    .all(launchId) as { task_id: number }[];
  const wanted = taskIds === 'all' ? undefined : new Set(taskIds);
  const changed: number[] = [];
  for (const { task_id } of rows) {
    if (wanted && !wanted.has(task_id)) continue;
    // The end time stays unknown (NULL): a late record from the runner may still say what really happened.
    ledger
      .stmt(
        'UPDATE attempts SET state = ?, reason = ? WHERE launch_id = ? AND task_id = ? AND ended_at IS NULL',
      )
      .run(state, reason, launchId, task_id);
    setTaskState(ledger, jobId, launchId, task_id, state, null);
    changed.push(task_id);
  }
  return changed;
}

/**
 * Transition: a whole attempt at once (queued → running → a terminal state), for a start and its end found in
 * the same batch of records: one insert and two updates instead of the two transitions' eight statements.
 * The launch's time totals are the caller's to add (once per batch). Idempotent.
 */
export function recordAttempt(
  ledger: Ledger,
  jobId: number,
  launchId: number,
  s: StartRecord,
  e: EndRecord,
): boolean {
  const info = ledger
    .stmt(
      `INSERT INTO attempts (job_id, task_id, attempt, launch_id, state, exit_code, signal, started_at, ended_at, host,
         slot, gpus, pid, stdout_path, stderr_path, reason)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
    )
    .run(
      jobId,
      s.task,
      s.attempt,
      launchId,
      e.state,
      e.exit_code,
      e.signal,
      s.at,
      e.at,
      s.host,
      s.slot,
      s.gpus,
      s.pid,
      s.out,
      s.err,
      e.reason ?? null,
    );
  if (info.changes === 0) return false;
  ledger
    .stmt('UPDATE launch_tasks SET state = ? WHERE launch_id = ? AND task_id = ?')
    .run(taskStateAfter(e), launchId, s.task);
  ledger
    .stmt(
      `UPDATE tasks SET attempts = max(attempts, ?), tries = tries + (last_launch_id IS ?),
         state = CASE WHEN last_launch_id = ? THEN ? ELSE state END,
         exit_code = CASE WHEN last_launch_id = ? THEN ? ELSE exit_code END
       WHERE job_id = ? AND id = ?`,
    )
    .run(s.attempt, launchId, launchId, taskStateAfter(e), launchId, e.exit_code, jobId, s.task);
  return true;
}

/** Add a batch's attempt times to its launch's totals. */
export function addLaunchTimes(
  ledger: Ledger,
  launchId: number,
  firstStart: number,
  lastEnd: number,
  busy: number,
): void {
  ledger
    .stmt(
      `UPDATE launches SET first_start = min(coalesce(first_start, ?), ?), last_end = max(coalesce(last_end, ?), ?),
       busy = busy + ? WHERE id = ?`,
    )
    .run(firstStart, firstStart, lastEnd, lastEnd, busy, launchId);
}

/**
 * Transition: the backend could not start a queued task (queued → error, e.g. Grid Engine's `Eqw`). Records the
 * attempt the backend tried, with no start and no end time and the backend's reason, so `drover status` can say
 * why and `--failed` reruns it as the next attempt. The end stays unknown (NULL): if the scheduler runs the task
 * after all, the runner's records still apply. Idempotent.
 */
export function recordError(
  ledger: Ledger,
  jobId: number,
  launchId: number,
  taskId: number,
  reason: string,
): boolean {
  const row = ledger
    .stmt('SELECT state FROM launch_tasks WHERE launch_id = ? AND task_id = ?')
    .get(launchId, taskId) as { state: State } | undefined;
  if (row?.state !== 'queued') return false;
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
  setTaskState(ledger, jobId, launchId, taskId, 'error', null);
  return true;
}

/**
 * Transition: the backend says why an ended attempt really ended (e.g. `killed` by a scheduler stop →
 * `timeout` when the scheduler's time limit was hit, or `cancelled` when the user had cancelled it). Changes
 * only an attempt still in state `from`; the task follows when it is the task's latest attempt. Idempotent.
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
): boolean {
  const info = ledger
    .stmt(
      'UPDATE attempts SET state = ?, reason = ? WHERE job_id = ? AND task_id = ? AND attempt = ? AND launch_id = ? AND state = ?',
    )
    .run(to, reason, jobId, taskId, attempt, launchId, from);
  if (info.changes === 0) return false;
  const latest = ledger
    .stmt('SELECT max(attempt) AS a FROM attempts WHERE job_id = ? AND task_id = ? AND launch_id = ?')
    .get(jobId, taskId, launchId) as { a: number };
  if (latest.a === attempt) setTaskState(ledger, jobId, launchId, taskId, to);
  return true;
}

/** A task's state after an attempt ended: the attempt's, or `queued` while the runner will retry it. */
function taskStateAfter(r: EndRecord): State {
  return r.retry ? 'queued' : r.state;
}
