import type { EndRecord, SkipRecord, StartRecord } from '../../protocol/records.js';
import type { State } from '../../protocol/states.js';
import { latestOfSql, refreshLatest } from '../latest-attempt.js';
import type { Ledger } from '../ledger.js';
import { isLegalMove, legalFromSql, type RefusedMove } from '../moves.js';
import {
  APPLIED,
  countAttempt,
  followInTask,
  markAttemptRequeued,
  moveInLaunch,
  type Outcome,
  refused,
  setTaskState,
  UNCHANGED,
  unInsertAttempt,
} from './move.js';

/**
 * The transitions a runner's (or a pool worker's) records make: an attempt starts, ends, or a task is skipped.
 * Each updates the attempt, the task's state in the launch and, when this launch is the task's newest, the task
 * itself; each is one transaction (joining the caller's when there is one), idempotent, and checked against the
 * legal moves (moves.ts).
 */

/** A task's state after an attempt ended: the attempt's, or `queued` while the runner will retry or requeue it. */
export function taskStateAfter(r: EndRecord): State {
  return r.retry || r.requeue ? 'queued' : r.state;
}

/** An end record's `requeue`: its attempt is marked and its task counts the requeue (markAttemptRequeued). */
function countRequeue(ledger: Ledger, jobId: number, launchId: number, r: EndRecord, inserted = false): void {
  if (r.requeue) markAttemptRequeued(ledger, jobId, launchId, r.task, r.attempt, inserted);
}

/** Transition `recordStart`: an attempt started (queued → running). Idempotent. */
export function recordStart(ledger: Ledger, jobId: number, launchId: number, r: StartRecord): Outcome {
  if (!ledger.db.inTransaction) return ledger.write(() => recordStart(ledger, jobId, launchId, r));
  const info = ledger
    .stmt(
      `INSERT INTO attempts (job_id, task_id, attempt, launch_id, state, started_at, host, slot, gpus, pid, stdout_path, stderr_path,
         stdout_off, stderr_off, log_seq)
       VALUES (?, ?, ?, ?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
    )
    .run(
      jobId,
      r.task,
      r.attempt,
      launchId,
      r.at,
      r.host,
      r.slot,
      r.gpus,
      r.pid,
      r.out,
      r.err,
      r.out_off ?? null,
      r.err_off ?? null,
      r.seq ?? null,
    );
  if (info.changes === 0) return UNCHANGED;
  const no = moveInLaunch(ledger, launchId, r.task, 'running');
  if (no) {
    unInsertAttempt(ledger, jobId, r.task, r.attempt);
    return { kind: 'refused', move: no };
  }
  countAttempt(ledger, jobId, launchId, r.task, r.attempt);
  ledger
    .stmt('UPDATE launches SET first_start = min(coalesce(first_start, ?), ?) WHERE id = ?')
    .run(r.at, r.at, launchId);
  followInTask(ledger, jobId, launchId, r.task, 'running', null);
  refreshLatest(ledger, jobId, r.task);
  return APPLIED;
}

/** What ending an attempt needs to know first: whether it is open, and the task's state and newest attempt. */
interface OpenAttempt {
  open: number;
  state: State | null;
  latest: number;
}

function openAttempt(
  ledger: Ledger,
  jobId: number,
  launchId: number,
  task: number,
  attempt: number,
): OpenAttempt | undefined {
  return ledger
    .stmt(
      `SELECT a.ended_at IS NULL AS open, lt.state,
         (SELECT max(attempt) FROM attempts WHERE job_id = a.job_id AND task_id = a.task_id AND launch_id = a.launch_id) AS latest
       FROM attempts a LEFT JOIN launch_tasks lt ON lt.launch_id = a.launch_id AND lt.task_id = a.task_id
       WHERE a.job_id = ? AND a.task_id = ? AND a.attempt = ? AND a.launch_id = ?`,
    )
    .get(jobId, task, attempt, launchId) as OpenAttempt | undefined;
}

/**
 * Transition `recordEnd`: an attempt ended (running → a terminal state, or → queued when the runner retries
 * it), with its exit code or signal. Idempotent. Unchanged when the ledger has no such attempt still open
 * (already ended, or its start was never recorded).
 */
export function recordEnd(ledger: Ledger, jobId: number, launchId: number, r: EndRecord): Outcome {
  if (!ledger.db.inTransaction) return ledger.write(() => recordEnd(ledger, jobId, launchId, r));
  const a = openAttempt(ledger, jobId, launchId, r.task, r.attempt);
  if (!a?.open) return UNCHANGED;
  const to = taskStateAfter(r);
  const moves = a.latest === r.attempt;
  if (moves && (a.state === null || !isLegalMove(a.state, to)))
    return refused(launchId, r.task, a.state ?? undefined, to);
  ledger
    .stmt(
      `UPDATE attempts SET state = ?, exit_code = ?, signal = ?, ended_at = ?, duration = ? - started_at, reason = ?,
         stdout_end = ?, stderr_end = ?
       WHERE job_id = ? AND task_id = ? AND attempt = ? AND launch_id = ?`,
    )
    .run(
      r.state,
      r.exit_code,
      r.signal,
      r.at,
      r.at,
      r.reason ?? null,
      r.out_end ?? null,
      r.err_end ?? null,
      jobId,
      r.task,
      r.attempt,
      launchId,
    );
  ledger
    .stmt(
      `UPDATE launches SET last_end = max(coalesce(last_end, ?), ?),
       busy = busy + coalesce(? - (SELECT started_at FROM attempts WHERE job_id = ? AND task_id = ? AND attempt = ?), 0)
       WHERE id = ?`,
    )
    .run(r.at, r.at, r.at, jobId, r.task, r.attempt, launchId);
  countRequeue(ledger, jobId, launchId, r);
  if (moves) setTaskState(ledger, jobId, launchId, r.task, a.state!, to, r.exit_code);
  refreshLatest(ledger, jobId, r.task);
  return APPLIED;
}

/**
 * Transition `recordEndWithoutStart`: an attempt ended whose start record is missing (its line in the record
 * file was damaged): the attempt is recorded with its end and an unknown start, so the task's state is what its
 * runner said, not `lost`. Only for a task of this launch; idempotent.
 */
export function recordEndWithoutStart(
  ledger: Ledger,
  jobId: number,
  launchId: number,
  r: EndRecord,
): Outcome {
  if (!ledger.db.inTransaction) return ledger.write(() => recordEndWithoutStart(ledger, jobId, launchId, r));
  const row = ledger
    .stmt(
      `SELECT lt.state, (SELECT max(attempt) FROM attempts WHERE job_id = ? AND task_id = lt.task_id AND launch_id = lt.launch_id) AS latest
       FROM launch_tasks lt WHERE lt.launch_id = ? AND lt.task_id = ?`,
    )
    .get(jobId, launchId, r.task) as { state: State; latest: number | null } | undefined;
  const to = taskStateAfter(r);
  if (!row) return refused(launchId, r.task, undefined, to);
  const info = ledger
    .stmt(
      `INSERT INTO attempts (job_id, task_id, attempt, launch_id, state, exit_code, signal, ended_at, reason)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
    )
    .run(jobId, r.task, r.attempt, launchId, r.state, r.exit_code, r.signal, r.at, r.reason ?? null);
  if (info.changes === 0) return UNCHANGED;
  const moves = row.latest === null || row.latest < r.attempt;
  if (moves && !isLegalMove(row.state, to)) {
    unInsertAttempt(ledger, jobId, r.task, r.attempt);
    return refused(launchId, r.task, row.state, to);
  }
  countAttempt(ledger, jobId, launchId, r.task, r.attempt);
  ledger
    .stmt('UPDATE launches SET last_end = max(coalesce(last_end, ?), ?) WHERE id = ?')
    .run(r.at, r.at, launchId);
  countRequeue(ledger, jobId, launchId, r);
  if (moves) setTaskState(ledger, jobId, launchId, r.task, row.state, to, r.exit_code);
  refreshLatest(ledger, jobId, r.task);
  return APPLIED;
}

/** The columns of a whole attempt's row, in the order attemptValues gives them. */
export const ATTEMPT_COLUMNS = `job_id, task_id, attempt, launch_id, state, exit_code, signal, started_at, ended_at,
  duration, host, slot, gpus, pid, stdout_path, stderr_path, reason, stdout_off, stdout_end, stderr_off, stderr_end,
  log_seq, requeued`;

/** How many values attemptValues gives: one per column. */
export const ATTEMPT_VALUES = ATTEMPT_COLUMNS.split(',').length;

/** A whole attempt's row (ATTEMPT_COLUMNS) from its start and end records. */
export function attemptValues(jobId: number, launchId: number, s: StartRecord, e: EndRecord): unknown[] {
  return [
    jobId,
    s.task,
    s.attempt,
    launchId,
    e.state,
    e.exit_code,
    e.signal,
    s.at,
    e.at,
    e.at - s.at, // the duration: what SQLite computes from the two (schema 8's CHECK)
    s.host,
    s.slot,
    s.gpus,
    s.pid,
    s.out,
    s.err,
    e.reason ?? null,
    s.out_off ?? null,
    e.out_end ?? null,
    s.err_off ?? null,
    e.err_end ?? null,
    s.seq ?? null,
    e.requeue ? 1 : 0,
  ];
}

/**
 * Transition `recordAttempt`: a whole attempt at once (queued → running → a terminal state), for a start and
 * its end found in the same batch of records: one insert and two updates instead of the two transitions' eight
 * statements. The launch's time totals are the caller's to add (once per batch). Idempotent.
 */
export function recordAttempt(
  ledger: Ledger,
  jobId: number,
  launchId: number,
  s: StartRecord,
  e: EndRecord,
): Outcome {
  if (!ledger.db.inTransaction) return ledger.write(() => recordAttempt(ledger, jobId, launchId, s, e));
  const info = ledger
    .stmt(
      `INSERT INTO attempts (${ATTEMPT_COLUMNS})
       VALUES (${Array(ATTEMPT_VALUES).fill('?').join(', ')}) ON CONFLICT DO NOTHING`,
    )
    .run(attemptValues(jobId, launchId, s, e));
  if (info.changes === 0) return UNCHANGED;
  const to = taskStateAfter(e);
  const no = moveInLaunch(ledger, launchId, s.task, to);
  if (no) {
    unInsertAttempt(ledger, jobId, s.task, s.attempt);
    return { kind: 'refused', move: no };
  }
  ledger
    .stmt(
      `UPDATE tasks SET attempts = max(attempts, ?), tries = tries + (last_launch_id IS ?),
         state = CASE WHEN last_launch_id = ? THEN ? ELSE state END,
         exit_code = CASE WHEN last_launch_id = ? THEN ? ELSE exit_code END,
         latest = ${latestOfSql('max(tasks.attempts, ?)')}
       WHERE job_id = ? AND id = ?`,
    )
    .run(s.attempt, launchId, launchId, to, launchId, e.exit_code, s.attempt, jobId, s.task);
  countRequeue(ledger, jobId, launchId, e, true);
  return APPLIED;
}

/** Add a batch's attempt times to its launch's totals (not a transition: bookkeeping of the launch row). */
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

/** The states a skip leaves as they are (recordSkip, recordSkips). */
const SKIP_LEAVES: readonly State[] = ['running', 'succeeded', 'cancelled'];

/**
 * Transition `recordSkip`: a task was cancelled while not running: queued, or waiting to retry (→ cancelled).
 * Unchanged for a task running or succeeded in the launch, or one the launch does not have.
 */
export function recordSkip(ledger: Ledger, jobId: number, launchId: number, r: SkipRecord): Outcome {
  if (!ledger.db.inTransaction) return ledger.write(() => recordSkip(ledger, jobId, launchId, r));
  const row = ledger
    .stmt('SELECT state FROM launch_tasks WHERE launch_id = ? AND task_id = ?')
    .get(launchId, r.task) as { state: State } | undefined;
  if (!row || SKIP_LEAVES.includes(row.state)) return UNCHANGED;
  if (!isLegalMove(row.state, 'cancelled')) return refused(launchId, r.task, row.state, 'cancelled');
  setTaskState(ledger, jobId, launchId, r.task, row.state, 'cancelled');
  return APPLIED;
}

/** SQL true for a task's state in `launch_tasks` that a skip does not leave as it is. */
const NOT_LEFT_SQL = `state NOT IN (${SKIP_LEAVES.map((st) => `'${st}'`).join(', ')})`;
/** SQL true for a state a skip moves to `cancelled`, and for one it refuses to (as recordSkip decides). */
const SKIPPABLE_SQL = `${NOT_LEFT_SQL} AND ${legalFromSql('state', 'cancelled')}`;
const UNSKIPPABLE_SQL = `${NOT_LEFT_SQL} AND NOT (${legalFromSql('state', 'cancelled')})`;

/**
 * Transition `recordSkips`: the tasks `first`..`last` of a skip-many record, exactly as recordSkip of each of
 * them in turn (ids rising), in three statements instead of a few per task: a cancelled million-task launch is
 * recorded in seconds. Returns the refusals, in that order (none is written); the rest is applied or, for tasks
 * running, succeeded, cancelled already or not in the launch, unchanged.
 */
export function recordSkips(
  ledger: Ledger,
  jobId: number,
  launchId: number,
  first: number,
  last: number,
): RefusedMove[] {
  if (!ledger.db.inTransaction) return ledger.write(() => recordSkips(ledger, jobId, launchId, first, last));
  const out: RefusedMove[] = [];
  // Refused: a task the launch holds as not in it yet.
  const bad = ledger
    .stmt(
      `SELECT task_id, state FROM launch_tasks WHERE launch_id = ? AND task_id BETWEEN ? AND ?
         AND ${UNSKIPPABLE_SQL} ORDER BY task_id`,
    )
    .all(launchId, first, last) as { task_id: number; state: State }[];
  for (const b of bad) out.push({ launch: launchId, task: b.task_id, from: b.state, to: 'cancelled' });
  // The task follows its state in this launch when the launch is its newest (followInTask), so it moves first,
  // while launch_tasks still says which tasks move.
  ledger
    .stmt(
      `UPDATE tasks SET state = 'cancelled'
       WHERE job_id = ? AND id BETWEEN ? AND ? AND last_launch_id = ?
         AND id IN (SELECT task_id FROM launch_tasks WHERE launch_id = ? AND task_id BETWEEN ? AND ? AND ${SKIPPABLE_SQL})`,
    )
    .run(jobId, first, last, launchId, launchId, first, last);
  ledger
    .stmt(
      `UPDATE launch_tasks SET state = 'cancelled' WHERE launch_id = ? AND task_id BETWEEN ? AND ? AND ${SKIPPABLE_SQL}`,
    )
    .run(launchId, first, last);
  return out;
}
