/**
 * The range of every number a user gives drover: one table, so the CLI, the config file and the controller's
 * API refuse the same values with the same words. docs/cli.md lists them. Out-of-range input is refused before
 * anything is expanded, allocated or written (docs/concepts.md invariant 5).
 */

/** An inclusive range of a numeric input, and the unit its messages use. */
export interface Range {
  min: number;
  max: number;
  /** Unit after the numbers in messages (`s`, `M`), or '' for counts. */
  unit: string;
}

const DAY = 86_400;

/** The most tasks a job may have; counts of tasks (--num-jobs, --max-tasks, ...) stay within it too. */
export const MAX_JOB_TASKS = 10_000_000;

/** Ranges of whole-number options, by what they count. */
export const COUNTS = {
  /** --num-jobs, --max-tasks, --tasks-per-node, --max-tasks-per-node. */
  tasks: { min: 1, max: MAX_JOB_TASKS, unit: '' },
  /** --cpus (per task, per worker). */
  cpus: { min: 1, max: 100_000, unit: '' },
  /** --gpus, --gpus-per-task. */
  gpus: { min: 0, max: 1024, unit: '' },
  /** --retries. */
  retries: { min: 0, max: 1000, unit: '' },
  /** --requeue. */
  requeues: { min: 0, max: 1000, unit: '' },
  /** --requeue-exit: an exit code a shell does not take for a signal (128+N) nor for not found (126, 127). */
  exitCode: { min: 1, max: 125, unit: '' },
  /** pool create --workers, --max-workers. */
  workers: { min: 1, max: 100_000, unit: '' },
  /** pool scale --workers (0: no workers), pool create --min-workers. */
  workersOrNone: { min: 0, max: 100_000, unit: '' },
  /** pool create --auto --backlog: allocations waiting in the scheduler's queue. */
  backlog: { min: 1, max: 1000, unit: '' },
  /** --slots of a pool or worker. */
  slots: { min: 1, max: 100_000, unit: '' },
  /** logs --attempt. */
  attempt: { min: 1, max: 1_000_000_000, unit: '' },
  /** history -n. */
  entries: { min: 1, max: 1_000_000_000, unit: '' },
  /** server --port (0: any free port). */
  port: { min: 0, max: 65_535, unit: '' },
} satisfies Record<string, Range>;

/** Ranges of durations in seconds. */
export const SECONDS = {
  /** --duration, --task-timeout: a time limit (Node's timers end at 24.8 days; drover's long timer does not). */
  limit: { min: 0.001, max: 365 * DAY, unit: 's' },
  /** --retry-delay: the first retry's wait; retries wait at most 60 s (runner/backoff.ts). */
  retryDelay: { min: 0, max: 60, unit: 's' },
  /** --kill-grace: between SIGTERM and SIGKILL. */
  killGrace: { min: 0, max: 3600, unit: 's' },
  /** cancel --wait. */
  wait: { min: 0, max: DAY, unit: 's' },
  /** server --heartbeat. */
  heartbeat: { min: 0.1, max: 3600, unit: 's' },
  /** server --lost-after. */
  lostAfter: { min: 1, max: DAY, unit: 's' },
  /** pool create --auto --idle-timeout. */
  idleTimeout: { min: 1, max: 7 * DAY, unit: 's' },
  /** watch --interval: how often the ledger (and a cluster's queue) is read. */
  watchInterval: { min: 0.1, max: 3600, unit: 's' },
  /** worker --patience. */
  patience: { min: 0, max: 365 * DAY, unit: 's' },
} satisfies Record<string, Range>;

/** Memory (--mem) in MiB: 1M to 1P. */
export const MEMORY_MIB: Range = { min: 1, max: 2 ** 30, unit: 'M' };

/** Seconds in the largest unit of the duration grammar that states them exactly: `90s`, `1h`, `365d`. */
export function formatSeconds(s: number): string {
  for (const [unit, per] of [
    ['d', DAY],
    ['h', 3600],
    ['m', 60],
  ] as const) {
    if (s >= per && s % per === 0) return `${s / per}${unit}`;
  }
  return `${s}s`;
}

/** A range as people read it in messages and docs, in the grammar they type: `1 to 10000000`, `0s to 1h`. */
export function describeRange(r: Range): string {
  return r.unit === 's' ? `${formatSeconds(r.min)} to ${formatSeconds(r.max)}` : `${r.min} to ${r.max}`;
}
