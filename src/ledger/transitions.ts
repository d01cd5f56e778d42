/**
 * Every state transition of tasks, attempts and launch tasks, by name. Each is documented at its head, runs
 * as one transaction (joining the caller's when there is one), returns a typed outcome, and is checked against
 * the table of legal moves (moves.ts): asked for a move the table does not allow, it refuses, writes nothing and
 * says so in its outcome.
 *
 * | transition                                    | where                         | move                           |
 * | --------------------------------------------- | ----------------------------- | ------------------------------ |
 * | recordStart                                   | transitions/attempts.ts       | queued → running               |
 * | recordEnd, recordEndWithoutStart              | transitions/attempts.ts       | running → terminal (or queued) |
 * | recordAttempt                                 | transitions/attempts.ts       | queued → terminal (or queued)  |
 * | recordAttempts (many recordAttempt at once)   | transitions/attempts-batch.ts | queued → terminal (or queued)  |
 * | recordSkip                                    | transitions/attempts.ts       | queued → cancelled             |
 * | recordSkips (a skip-many record's ranges)     | transitions/attempts.ts       | queued → cancelled             |
 * | markUnfinished                                | transitions/backend.ts        | queued/running → terminal      |
 * | recordError                                   | transitions/backend.ts        | queued → error                 |
 * | restateEnd                                    | transitions/backend.ts        | killed → terminal              |
 * | recordPreempted (an element run again)        | transitions/preempted.ts      | killed/lost → queued (or back) |
 * | awaitRerun (an element pending to run again)  | transitions/preempted.ts      | killed/lost → queued           |
 * | createPoolLaunch (a pool launch's queue row)  | transitions/expand.ts         | (its row; no task moves)       |
 * | expandLaunch, expandAll                       | transitions/expand.ts         | pending → queued               |
 * | assignTask, unassign, finishTask              | transitions/pool.ts           | (held / waiting / done)        |
 * | requeueQueued                                 | transitions/pool.ts           | (waiting: queued by its end)   |
 * | markRequeued                                  | transitions/pool.ts           | (a lost attempt, requeued)     |
 * | requeueForRetry                               | transitions/pool.ts           | terminal → queued              |
 * | markLost                                      | transitions/pool.ts           | running → lost                 |
 * | loseUnreported                                | transitions/pool.ts           | (a lost attempt, start unsaid) |
 * | cancelPoolTasks                               | transitions/pool.ts           | queued → cancelled             |
 * | closePoolLaunchIfDone                         | transitions/pool.ts           | (the launch closes)            |
 * | createLaunch, deleteLaunch, closeLaunchIfDone | transitions/launch.ts         | pending → queued, and back     |
 * | syncJobTasks                                  | jobs.ts                       | any → pending (a new command)  |
 *
 * Records become transitions through one path, applyRecords (apply-records.ts), for record files and pool
 * reports alike.
 */
export {
  addLaunchTimes,
  recordAttempt,
  recordEnd,
  recordEndWithoutStart,
  recordSkip,
  recordSkips,
  recordStart,
  taskStateAfter,
} from './transitions/attempts.js';
export { recordAttempts } from './transitions/attempts-batch.js';
export { markUnfinished, recordError, restateEnd } from './transitions/backend.js';
export { createPoolLaunch, expandAll, expandLaunch, idsAfter } from './transitions/expand.js';
export { closeLaunchIfDone, createLaunch, deleteLaunch } from './transitions/launch.js';
export { APPLIED, type Outcome, UNCHANGED } from './transitions/move.js';
export {
  applyWorkerRecords,
  assignTask,
  cancelPoolTasks,
  closePoolLaunchIfDone,
  finishTask,
  loseUnreported,
  markLost,
  markRequeued,
  requeueForRetry,
  requeueQueued,
  unassign,
} from './transitions/pool.js';
export { awaitRerun, recordPreempted } from './transitions/preempted.js';
