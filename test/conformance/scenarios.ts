import type { Scenario } from './scenario.js';
import { cancel } from './scenarios/cancel.js';
import { backendTimeLimit, diedBeforeRunner, exitStates, taskTimeLimit } from './scenarios/ends.js';
import { env } from './scenarios/env.js';
import { eqw, eqwReasonUnread } from './scenarios/eqw.js';
import { arrayLimit, slurmAccounting } from './scenarios/limits.js';
import { cancelWhileDown, queueOutage, truncatedAccounting, truncatedQueue } from './scenarios/outages.js';
import { packed } from './scenarios/packed.js';
import { poolAuto, poolAutoPaused, poolAutoRefused } from './scenarios/pool-auto.js';
import { poolArrayLimit, poolRefusedOrUnreachable, poolRefusedRequest } from './scenarios/pool-refusals.js';
import { poolOnScheduler } from './scenarios/pool-workers.js';
import {
  preemptedByPartition,
  preemptRequeue,
  requeueAtElementLimit,
  requeueKeepsLaunchOpen,
} from './scenarios/preempt.js';
import { refusedOrUnreachable, refusedRequest, rollback } from './scenarios/refusals.js';
import { requeueAtLimit } from './scenarios/requeue.js';
import { bestOfSweep } from './scenarios/results.js';
import { schedulerCalls } from './scenarios/scheduler-calls.js';
import { dryRunIsWhatRuns, rerunFailed, tasklistBlocks } from './scenarios/selection.js';
import { slowClients } from './scenarios/slow-clients.js';
import { limitVariables, warnBeforeElementLimit, warnBeforeTaskTimeout } from './scenarios/warn-signal.js';
import { watch } from './scenarios/watch.js';

/**
 * THE list of backend conformance scenarios. Every backend runs every scenario that applies to it (run.ts);
 * a scenario that can run on both a fake scheduler and a real cluster runs on both.
 */
export const SCENARIOS: Scenario[] = [
  exitStates,
  taskTimeLimit,
  warnBeforeTaskTimeout,
  warnBeforeElementLimit,
  requeueAtLimit,
  preemptRequeue,
  requeueKeepsLaunchOpen,
  preemptedByPartition,
  requeueAtElementLimit,
  limitVariables,
  backendTimeLimit,
  cancel,
  rerunFailed,
  tasklistBlocks,
  dryRunIsWhatRuns,
  packed,
  env,
  diedBeforeRunner,
  eqw,
  eqwReasonUnread,
  refusedRequest,
  poolOnScheduler,
  poolAuto,
  poolAutoPaused,
  poolAutoRefused,
  poolRefusedRequest,
  poolRefusedOrUnreachable,
  poolArrayLimit,
  refusedOrUnreachable,
  rollback,
  queueOutage,
  truncatedQueue,
  truncatedAccounting,
  cancelWhileDown,
  arrayLimit,
  slurmAccounting,
  bestOfSweep,
  schedulerCalls,
  watch,
  slowClients,
];
