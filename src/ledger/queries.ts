import { isFailedState, STATES, type State, type TerminalState, zeroCounts } from '../protocol/states.js';
import { idIn } from './id-list.js';
import type { LaunchRow } from './launches.js';
import type { Ledger } from './ledger.js';
import { stateIndexTerms, taskWhere } from './task-filter.js';

/** Count rows by state into a record with every state present. */
function countBy(rows: { state: State; n: number }[]): Record<State, number> {
  const counts = zeroCounts();
  for (const r of rows) counts[r.state] = r.n;
  return counts;
}

/** A job's tasks counted by their latest state. */
export function jobCounts(ledger: Ledger, jobId: number): Record<State, number> {
  return countBy(
    ledger.stmt('SELECT state, n FROM job_counts WHERE job_id = ?').all(jobId) as {
      state: State;
      n: number;
    }[],
  );
}

/** A launch's tasks counted by their state within that launch. */
export function launchCounts(ledger: Ledger, launchId: number): Record<State, number> {
  return countBy(
    ledger.stmt('SELECT state, n FROM launch_counts WHERE launch_id = ?').all(launchId) as {
      state: State;
      n: number;
    }[],
  );
}

/** When a launch's attempts started and ended, and how long they ran in total. */
export function launchTimes(
  ledger: Ledger,
  launchId: number,
): { first_start: number | null; last_end: number | null; busy: number | null } {
  return ledger.stmt('SELECT first_start, last_end, busy FROM launches WHERE id = ?').get(launchId) as {
    first_start: number | null;
    last_end: number | null;
    busy: number | null;
  };
}

/**
 * A slow attempt as `drover status` names it, with the tag, command and sweep values its task has now (the
 * command it ran: attempts of a replaced command are history).
 */
export interface SlowAttempt {
  task: number;
  attempt: number;
  /** How long it ran, seconds, to the millisecond. */
  seconds: number;
  state: State;
  tag: string;
  command: string;
  /** The task's sweep values (`{}` for a job prelaunch did not make). */
  params: Record<string, string>;
}

/** The longest-running ended attempts of a job's current commands. */
export function slowestAttempts(ledger: Ledger, jobId: number, limit: number): SlowAttempt[] {
  const rows = ledger
    .stmt(
      `SELECT a.task_id AS task, a.attempt, round(a.duration, 3) AS seconds, a.state, t.tag, t.command, t.params
       FROM attempts a
         JOIN tasks t ON t.job_id = a.job_id AND t.id = a.task_id
         JOIN launch_tasks lt ON lt.launch_id = a.launch_id AND lt.task_id = a.task_id AND lt.revision = t.revision
       WHERE a.job_id = ? AND a.duration IS NOT NULL ORDER BY a.job_id DESC, a.duration DESC LIMIT ?`,
    )
    .all(jobId, limit) as (Omit<SlowAttempt, 'params'> & { params: string })[];
  return rows.map((r) => ({ ...r, params: JSON.parse(r.params) as Record<string, string> }));
}

/**
 * Ids of a job's tasks whose state passes `pick`: through the state index when pending is not among them (the
 * index holds no pending task), else along the job's range of the primary key.
 */
export function taskIdsWhere(ledger: Ledger, jobId: number, pick: (s: State) => boolean): number[] {
  const states = STATES.filter(pick);
  if (states.length === 0) return [];
  const w = taskWhere({ states });
  const indexed = stateIndexTerms(states).length > 0 ? ' INDEXED BY tasks_state' : '';
  return ledger
    .stmt(`SELECT id FROM tasks${indexed} WHERE ${w.sql} ORDER BY id`)
    .pluck()
    .all(jobId, ...w.args) as number[];
}

/** A task whose latest state is a failure, as `drover status` lists it. */
export interface FailedTask {
  /** Task id. */
  task: number;
  state: State;
  /** Its latest exit code, when it exited. */
  exit_code: number | null;
  /** Why its latest attempt ended so, when known (e.g. the scheduler's reason). */
  reason: string | null;
}

/** The first `limit` of a job's tasks (in id order) whose state is a failure (isFailedState), through the state index. */
export function failedTasks(ledger: Ledger, jobId: number, limit: number): FailedTask[] {
  // The failed states leave pending out: the WHERE says state != 'pending', which the state index needs.
  const w = taskWhere({ states: STATES.filter(isFailedState) });
  return ledger
    .stmt(
      `SELECT id AS task, state, exit_code,
         (SELECT reason FROM attempts a WHERE a.job_id = tasks.job_id AND a.task_id = tasks.id
          ORDER BY a.attempt DESC LIMIT 1) AS reason
       FROM tasks INDEXED BY tasks_state WHERE ${w.sql} ORDER BY +id LIMIT ?`,
    )
    .all(jobId, ...w.args, limit) as FailedTask[];
}

/** Where an attempt's output is (src/protocol/log-slices.ts: placeOf). */
export interface AttemptLogs {
  stdout_path: string | null;
  stderr_path: string | null;
  stdout_off: number | null;
  stdout_end: number | null;
  stderr_off: number | null;
  stderr_end: number | null;
  log_seq: number | null;
}

/** The columns of AttemptLogs, for a SELECT from attempts (alias `a.` where joined). */
export const ATTEMPT_LOG_COLUMNS =
  'stdout_path, stderr_path, stdout_off, stdout_end, stderr_off, stderr_end, log_seq';

/** The latest attempt of a task's current command (or attempt `n`, of any command), with its log paths. */
export function taskAttempt(
  ledger: Ledger,
  jobId: number,
  taskId: number,
  n?: number,
):
  | (AttemptLogs & {
      attempt: number;
      state: State;
      launch_id: number;
      /** Why it ended so, when known (a lost attempt: what said it is lost). */
      reason: string | null;
    })
  | undefined {
  const sql =
    n === undefined
      ? `SELECT a.* FROM attempts a JOIN tasks t ON t.job_id = a.job_id AND t.id = a.task_id
           JOIN launch_tasks lt ON lt.launch_id = a.launch_id AND lt.task_id = a.task_id AND lt.revision = t.revision
         WHERE a.job_id = ? AND a.task_id = ? ORDER BY a.attempt DESC LIMIT 1`
      : 'SELECT * FROM attempts WHERE job_id = ? AND task_id = ? AND attempt = ?';
  const args = n === undefined ? [jobId, taskId] : [jobId, taskId, n];
  return ledger.stmt(sql).get(...args) as ReturnType<typeof taskAttempt>;
}

/** A task's state now and its newest launch (null: never launched with its current command). */
export function taskNow(
  ledger: Ledger,
  jobId: number,
  taskId: number,
): { state: State; launch: number | null } {
  return ledger
    .stmt('SELECT state, last_launch_id AS launch FROM tasks WHERE job_id = ? AND id = ?')
    .get(jobId, taskId) as { state: State; launch: number | null };
}

/** A task's latest attempt in one launch, with its log paths. */
export function latestInLaunch(
  ledger: Ledger,
  jobId: number,
  taskId: number,
  launchId: number,
): (AttemptLogs & { attempt: number }) | undefined {
  return ledger
    .stmt(
      `SELECT attempt, ${ATTEMPT_LOG_COLUMNS} FROM attempts WHERE job_id = ? AND task_id = ? AND +launch_id = ?
       ORDER BY attempt DESC LIMIT 1`,
    )
    .get(jobId, taskId, launchId) as ReturnType<typeof latestInLaunch>;
}

/** The launches that include a task and where it is still queued or running. */
export function activeLaunchesOf(ledger: Ledger, jobId: number): LaunchRow[] {
  return ledger
    .stmt(
      `SELECT * FROM launches l WHERE job_id = ? AND open = 1 AND EXISTS
       (SELECT 1 FROM launch_tasks lt WHERE lt.launch_id = l.id AND lt.state IN ('queued', 'running')) ORDER BY id`,
    )
    .all(jobId) as LaunchRow[];
}

/** One attempt as `list --attempts` shows it, with the command it ran. */
export interface AttemptRow {
  task: number;
  attempt: number;
  launch: string;
  state: State;
  exit_code: number | null;
  signal: string | null;
  /** Unix seconds, or null when it never started. */
  started_at: number | null;
  ended_at: number | null;
  host: string | null;
  reason: string | null;
  /** The command it ran: the task's current one, or an earlier one the jobfile has since replaced. */
  command: string | null;
  /** True when it ran the task's current command (it counts for the task's state); false for history. */
  current: boolean;
}

/** A job's attempts, every command's, in task then attempt order; optionally only some task ids. */
export function jobAttempts(ledger: Ledger, jobId: number, ids?: readonly number[]): AttemptRow[] {
  const only = ids ? idIn('a.task_id', ids) : undefined;
  const rows = ledger
    .stmt(
      `SELECT a.task_id AS task, a.attempt, CAST(a.launch_id AS TEXT) AS launch, a.state, a.exit_code, a.signal,
         a.started_at, a.ended_at, a.host, a.reason,
         CASE WHEN t.revision = lt.revision THEN t.command ELSE r.command END AS command,
         coalesce(t.revision = lt.revision, 0) AS current
       FROM attempts a
         JOIN launch_tasks lt ON lt.launch_id = a.launch_id AND lt.task_id = a.task_id
         LEFT JOIN tasks t ON t.job_id = a.job_id AND t.id = a.task_id
         LEFT JOIN task_revisions r ON r.job_id = a.job_id AND r.task_id = a.task_id AND r.revision = lt.revision
       WHERE a.job_id = ?${only ? ` AND ${only.sql}` : ''} ORDER BY a.task_id, a.attempt`,
    )
    .all(jobId, ...(only?.params ?? [])) as (Omit<AttemptRow, 'current'> & {
    current: number;
  })[];
  return rows.map((r) => ({ ...r, current: r.current === 1 }));
}

/**
 * How live progress names a job's task: its sweep values (`--lr=0.1 --seed=2`), else its tag, else ''. One
 * primary-key lookup per call (called for the tasks that fail, as they fail).
 */
export function taskLabeler(ledger: Ledger, jobname: string): (task: number) => string {
  const sql =
    'SELECT t.tag, t.params FROM tasks t JOIN jobs j ON j.id = t.job_id WHERE j.name = ? AND t.id = ?';
  return (task) => {
    // Fetched each time (a cache hit): it comes in the default mode whatever others did with it meanwhile.
    const row = ledger.stmt(sql).get(jobname, task) as { tag: string; params: string } | undefined;
    if (!row) return '';
    const params = Object.entries(JSON.parse(row.params) as Record<string, string>);
    return params.length > 0 ? params.map(([k, v]) => `${k}=${v}`).join(' ') : row.tag;
  };
}

/** An attempt of a launch that ended without succeeding, as `drover watch` reports it. */
export interface EndedBadly {
  task: number;
  attempt: number;
  state: TerminalState;
  exit_code: number | null;
  signal: string | null;
  reason: string | null;
  seconds: number | null;
  stderr_path: string | null;
  /** Where its stderr begins in a segment (null: a file of its own). */
  stderr_off: number | null;
  /** 1 when `--requeue` ran it again (its task goes on), else 0. */
  requeued: number;
}

/** The attempts of one launch (the argument) that ended failed, killed, timed out, lost or in error. */
const ENDED_BADLY =
  "FROM attempts WHERE launch_id = ? AND state IN ('failed', 'killed', 'timeout', 'lost', 'error')";

/** A launch's attempts that ended badly, in the order they ended. */
export function endedBadly(ledger: Ledger, launchId: number): EndedBadly[] {
  return ledger
    .stmt(
      `SELECT task_id AS task, attempt, state, exit_code, signal, reason, round(duration, 3) AS seconds, stderr_path,
       stderr_off, requeued ${ENDED_BADLY} ORDER BY ended_at, task_id, attempt`,
    )
    .all(launchId) as EndedBadly[];
}

/** How many of a launch's attempts ended badly (an index count: whether endedBadly has anything new). */
export function endedBadlyCount(ledger: Ledger, launchId: number): number {
  return ledger.stmt(`SELECT count(*) ${ENDED_BADLY}`).pluck().get(launchId) as number;
}

/** The requeues (`--requeue`) of a job's current commands, all launches. */
export function jobRequeues(ledger: Ledger, jobId: number): number {
  return ledger
    .stmt('SELECT coalesce(sum(requeues), 0) FROM tasks WHERE job_id = ?')
    .pluck()
    .get(jobId) as number;
}

/** The attempts of a launch that `--requeue` ran again. */
export function launchRequeues(ledger: Ledger, launchId: number): number {
  return ledger
    .stmt('SELECT count(*) FROM attempts WHERE launch_id = ? AND requeued = 1')
    .pluck()
    .get(launchId) as number;
}

/** Whether `--requeue` ran this attempt again (its next attempt is a requeue, not a retry). */
export function attemptRequeued(ledger: Ledger, jobId: number, taskId: number, attempt: number): boolean {
  return (
    ledger
      .stmt('SELECT requeued FROM attempts WHERE job_id = ? AND task_id = ? AND attempt = ?')
      .pluck()
      .get(jobId, taskId, attempt) === 1
  );
}
