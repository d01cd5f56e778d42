import type { Ledger } from './ledger.js';

/**
 * What the backends read of a launch's attempts and runners to reconcile it with what its scheduler says, or with
 * a runner that is gone: attempts a scheduler stopped, attempts a dead runner left running, attempts Grid Engine
 * could not start, the runners that got as far as recording. Reads only; what they conclude is recorded by the
 * transitions (transitions/backend.ts).
 */

/** An attempt ended `killed`, with the reason its runner gave (null: it died of a signal). */
export interface KilledAttempt {
  /** Task id. */
  task: number;
  attempt: number;
  reason: string | null;
}

/**
 * The latest attempts of a launch's tasks that ended `killed` (and so are their tasks there) by a scheduler's stop:
 * recorded with `reason` by a runner that got its signal, or dead of SIGTERM/SIGKILL with no reason recorded.
 */
export function schedulerKilledAttempts(ledger: Ledger, launchId: number, reason: string): KilledAttempt[] {
  return ledger
    .stmt(
      `SELECT a.task_id AS task, a.attempt, a.reason FROM attempts a
       JOIN launch_tasks lt ON lt.launch_id = a.launch_id AND lt.task_id = a.task_id AND lt.state = 'killed'
       WHERE a.launch_id = ? AND a.state = 'killed'
         AND a.attempt = (SELECT max(attempt) FROM attempts WHERE job_id = a.job_id AND task_id = a.task_id)
         AND (a.reason = ? OR (a.reason IS NULL AND a.signal IN ('SIGTERM', 'SIGKILL')))`,
    )
    .all(launchId, reason) as KilledAttempt[];
}

/** Each task of a launch with an attempt ended `killed` with `reason`, and its highest such attempt. */
export function killedWithReason(ledger: Ledger, launchId: number, reason: string): Map<number, number> {
  const rows = ledger
    .stmt(
      `SELECT task_id, max(attempt) AS attempt FROM attempts WHERE launch_id = ? AND state = 'killed' AND reason = ?
       GROUP BY task_id`,
    )
    .all(launchId, reason) as { task_id: number; attempt: number }[];
  return new Map(rows.map((r) => [r.task_id, r.attempt]));
}

/** An attempt recorded as running with the pid its runner started it as. */
export interface RecordedProcess {
  /** Task id. */
  task: number;
  pid: number;
  /** Unix seconds. */
  started_at: number;
}

/** A launch's attempts recorded as running (started, no end) with a known pid. */
export function runningProcesses(ledger: Ledger, launchId: number): RecordedProcess[] {
  return ledger
    .stmt(
      `SELECT task_id AS task, pid, started_at FROM attempts
       WHERE launch_id = ? AND state = 'running' AND ended_at IS NULL AND pid > 0`,
    )
    .all(launchId) as RecordedProcess[];
}

/**
 * The other launches of a job on `backend` where some of `taskIds` has an attempt in `error` (the backend could
 * not start it: Grid Engine's Eqw), each once.
 */
export function launchesWithErrors(
  ledger: Ledger,
  jobId: number,
  backend: string,
  exceptLaunch: number,
  taskIds: readonly number[],
): number[] {
  return ledger
    .stmt(
      `SELECT DISTINCT a.launch_id AS launch FROM attempts a JOIN launches l ON l.id = a.launch_id
       WHERE a.job_id = ? AND a.state = 'error' AND l.backend = ? AND a.launch_id != ?
         AND a.task_id IN (SELECT value FROM json_each(?))`,
    )
    .pluck()
    .all(jobId, backend, exceptLaunch, JSON.stringify(taskIds)) as number[];
}

/** The names of the runners that wrote records for a launch (`g<key>.<host>.<pid>` on clusters). */
export function runnerNames(ledger: Ledger, launchId: number): string[] {
  return ledger.stmt('SELECT name FROM runners WHERE launch_id = ?').pluck().all(launchId) as string[];
}
