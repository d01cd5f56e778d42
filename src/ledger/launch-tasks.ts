import type { State } from '../protocol/states.js';
import type { Ledger } from './ledger.js';

/**
 * Reads of one launch's task rows (launch_tasks: each task's state within the launch), as the backends and use
 * cases need them to cancel, reconcile and summarise a launch. Each walks the launch's range of the primary key.
 */

/** A task queued or running in a launch. */
export interface UnfinishedTask {
  /** Task id. */
  task: number;
  /** Its state within the launch. */
  state: 'queued' | 'running';
}

/** Every task id of a launch, in id order. */
export function launchTaskIds(ledger: Ledger, launchId: number): number[] {
  return ledger
    .stmt('SELECT task_id FROM launch_tasks WHERE launch_id = ? ORDER BY task_id')
    .pluck()
    .all(launchId) as number[];
}

/** The ids of a launch's tasks that are queued or running in it, in id order. */
export function launchActiveIds(ledger: Ledger, launchId: number): number[] {
  return ledger
    .stmt(
      "SELECT task_id FROM launch_tasks WHERE launch_id = ? AND state IN ('queued', 'running') ORDER BY task_id",
    )
    .pluck()
    .all(launchId) as number[];
}

/** Every task of a launch with its state in it, in id order. */
export function launchTaskStates(ledger: Ledger, launchId: number): { task_id: number; state: State }[] {
  return ledger
    .stmt('SELECT task_id, state FROM launch_tasks WHERE launch_id = ? ORDER BY task_id')
    .all(launchId) as { task_id: number; state: State }[];
}

/** A launch's tasks that are queued or running in it, with that state (in id order: the key's). */
export function launchUnfinished(ledger: Ledger, launchId: number): UnfinishedTask[] {
  return ledger
    .stmt(
      "SELECT task_id AS task, state FROM launch_tasks WHERE launch_id = ? AND state IN ('queued', 'running')",
    )
    .all(launchId) as UnfinishedTask[];
}

/** A launch's queued or running tasks with how many attempts each task has had (its `attempts`, all launches). */
export function launchUnfinishedWithAttempts(
  ledger: Ledger,
  jobId: number,
  launchId: number,
): (UnfinishedTask & { attempts: number })[] {
  return ledger
    .stmt(
      `SELECT lt.task_id AS task, lt.state, t.attempts FROM launch_tasks lt JOIN tasks t ON t.job_id = ? AND t.id = lt.task_id
       WHERE lt.launch_id = ? AND lt.state IN ('queued', 'running')`,
    )
    .all(jobId, launchId) as (UnfinishedTask & { attempts: number })[];
}

/** A task of a launch that ended without succeeding, as the summary after a launch names it. */
export interface NotSucceeded {
  /** Task id. */
  task: number;
  /** Its state within the launch. */
  state: State;
  /** Its latest exit code, when it exited. */
  exit_code: number | null;
}

/** The first `limit` tasks of a launch (in id order) that ended there without succeeding. */
export function launchNotSucceeded(
  ledger: Ledger,
  jobId: number,
  launchId: number,
  limit: number,
): NotSucceeded[] {
  return ledger
    .stmt(
      `SELECT lt.task_id AS task, lt.state, t.exit_code FROM launch_tasks lt JOIN tasks t ON t.job_id = ? AND t.id = lt.task_id
       WHERE lt.launch_id = ? AND lt.state NOT IN ('succeeded', 'queued', 'running') ORDER BY lt.task_id LIMIT ?`,
    )
    .all(jobId, launchId, limit) as NotSucceeded[];
}
