/**
 * The reasons a runner writes in an `end` record: the one vocabulary of every runner (the TypeScript runner and
 * the programs in src/runner/programs/, which receive these words with their settings: program-settings.ts) and
 * of the reconciliation that matches on them (backends/slurm/reconcile.ts, backends/gridengine/reconcile.ts).
 * docs/runners.md lists them with the exit-status table they belong to.
 */

/**
 * The runner was sent SIGTERM — by the scheduler ending its array element (time limit, preemption, scancel,
 * qdel) — and stopped the task. Reconciliation matches on it to say what the scheduler meant (timeout, cancelled).
 */
export const SCHEDULER_STOP = 'the runner was sent SIGTERM (scheduler stop)';

/** The task ended but the runner could not learn how (bash loses the status of a child that ends during a trap). */
export const UNKNOWN_STATUS = 'its exit status is unknown';

/**
 * drover's process server (the spawn or fork server that starts and reaps the tasks) died while the task ran:
 * the runner stopped the task itself, by its pid, and cannot know how it would have ended.
 */
export const SERVER_LOST = "drover's process server died: the runner stopped the task";

/** The runner stopped the attempt at its time limit (`--task-timeout`), in seconds as given (docs: `T`). */
export function timeLimitReason(seconds: number | 'T'): string {
  return `time limit of ${seconds} s`;
}

/** The task exited with `--requeue-exit` (75 unless the launch said): it saved its state and asks to run again. */
export const CHECKPOINTED = 'checkpointed';

/** The exit code by which a task asks to be requeued, when the launch does not say: EX_TEMPFAIL (sysexits.h). */
export const REQUEUE_EXIT_DEFAULT = 75;

/**
 * The scheduler stopped the attempt's array element and ran the element again (preemption, `scontrol requeue`,
 * `qmod -rj`, a failed node): the element's next runner says so of the attempt it finds stopped (runner/restart.ts).
 */
export const PREEMPTED = 'preempted: the scheduler stopped its array element and ran it again';

/** PREEMPTED, for a task `--requeue N` has no requeue left for (N > 0), or that has none (N = 0). */
export function preemptedReason(requeue: number, left: boolean): string {
  if (left || requeue === 0) return PREEMPTED;
  return `${PREEMPTED}, no requeue left (--requeue ${requeue})`;
}

/**
 * `--requeue` on a cluster element with a time limit (`--duration`): the runner stopped the attempt just before
 * the element's limit, and asks the scheduler to run the element again (exit 99: Slurm `scontrol requeue`, Grid
 * Engine's rescheduling), where the task goes on, resumed, while it has requeues left.
 */
export const ELEMENT_LIMIT = 'the time limit of its array element (--duration)';

/** The exit status by which an element's runner asks for the element to run again (Grid Engine's own). */
export const RUN_ELEMENT_AGAIN = 99;
