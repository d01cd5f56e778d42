import type { Applied } from '../ledger/apply-records.js';
import type { Ledger } from '../ledger/ledger.js';
import type { State } from '../ledger/states.js';
import { applyWorkerRecords } from '../ledger/transitions.js';
import type { AttemptRecord } from '../runner/records.js';

/**
 * The controller's reads and transitions on the ledger: the transitions are the ledger's own
 * (ledger/transitions/pool.ts); a worker's records go through the one ingestion path (applyRecords).
 */

export {
  attemptStarted,
  freshTasks,
  type PoolTaskRow,
  poolTask,
  type ReadyTask,
  taskCommand,
} from '../ledger/pool-launches.js';
export {
  assignTask,
  closePoolLaunchIfDone,
  finishTask,
  markLost,
  requeueForRetry,
  unassign,
} from '../ledger/transitions.js';
export type { Applied };

/** A task's state within a launch. */
export function launchTaskState(ledger: Ledger, launchId: number, taskId: number): State | undefined {
  return (
    ledger.stmt('SELECT state FROM launch_tasks WHERE launch_id = ? AND task_id = ?').get(launchId, taskId) as
      | { state: State }
      | undefined
  )?.state;
}

/** Apply one launch's records from a worker, in order (the one ingestion path). Idempotent. */
export function applyRecords(
  ledger: Ledger,
  jobId: number,
  launchId: number,
  records: AttemptRecord[],
): Applied {
  return applyWorkerRecords(ledger, { id: launchId, job_id: jobId }, records);
}
