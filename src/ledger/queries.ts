import type { TaskRow } from './jobs.js';
import type { LaunchRow } from './launches.js';
import type { Ledger } from './ledger.js';
import { STATES, type State, zeroCounts } from './states.js';

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

/** The longest-running ended attempts of a job. */
export function slowestAttempts(
  ledger: Ledger,
  jobId: number,
  limit: number,
): { task: number; attempt: number; seconds: number; state: State }[] {
  return ledger
    .stmt(
      `SELECT task_id AS task, attempt, duration AS seconds, state FROM attempts
       WHERE job_id = ? AND duration IS NOT NULL ORDER BY job_id DESC, duration DESC LIMIT ?`,
    )
    .all(jobId, limit) as { task: number; attempt: number; seconds: number; state: State }[];
}

/** A job's tasks, optionally only some ids and states, in id order. */
export function listTasks(
  ledger: Ledger,
  jobId: number,
  filter: { ids?: readonly number[]; states?: readonly State[] } = {},
): TaskRow[] {
  const rows = ledger.stmt('SELECT * FROM tasks WHERE job_id = ? ORDER BY id').all(jobId) as TaskRow[];
  const ids = filter.ids ? new Set(filter.ids) : undefined;
  const states = filter.states ? new Set(filter.states) : undefined;
  return rows.filter((t) => (!ids || ids.has(t.id)) && (!states || states.has(t.state)));
}

/** Ids of a job's tasks whose state passes `pick`. */
export function taskIdsWhere(ledger: Ledger, jobId: number, pick: (s: State) => boolean): number[] {
  const states = STATES.filter(pick);
  return (
    ledger
      .stmt(
        `SELECT id FROM tasks INDEXED BY tasks_state WHERE job_id = ? AND state IN (${states.map(() => '?').join(', ')}) ORDER BY id`,
      )
      .all(jobId, ...states) as { id: number }[]
  ).map((r) => r.id);
}

/** The latest attempt of a task (or attempt `n`), with its log paths. */
export function taskAttempt(
  ledger: Ledger,
  jobId: number,
  taskId: number,
  n?: number,
):
  | {
      attempt: number;
      state: State;
      stdout_path: string | null;
      stderr_path: string | null;
      launch_id: number;
    }
  | undefined {
  const sql =
    n === undefined
      ? 'SELECT * FROM attempts WHERE job_id = ? AND task_id = ? ORDER BY attempt DESC LIMIT 1'
      : 'SELECT * FROM attempts WHERE job_id = ? AND task_id = ? AND attempt = ?';
  const args = n === undefined ? [jobId, taskId] : [jobId, taskId, n];
  return ledger.stmt(sql).get(...args) as ReturnType<typeof taskAttempt>;
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
