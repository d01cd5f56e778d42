import type { AttemptRecord } from '../protocol/records.js';
import type { TerminalState } from '../protocol/states.js';
import type { Slot } from './slots.js';
import type { ProcessStarter } from './starters/starter.js';

/** How a task's attempt ended, as live progress shows it (attempt 0: cancelled before it ever started). */
export interface TaskEnd {
  task: number;
  attempt: number;
  state: TerminalState;
  exitCode: number | null;
  signal: string | null;
  /** Why, when the runner knows more than the state says (a time limit, a stop). */
  reason?: string;
  /** How long it ran, seconds (null: it never started). */
  seconds: number | null;
  /** Its stderr log file (null: it never started, or its output is in segments: see `drover logs`). */
  err: string | null;
  /** Another attempt of the task follows: a retry, or a requeue when `requeue` is set. */
  willRetry: boolean;
  /** The attempt follows as a requeue (`--requeue`: it hit its time limit or checkpointed), not a retry. */
  requeue?: boolean;
}

/** What the runner tells its caller as it goes (for live progress). */
export interface RunnerHooks {
  onStart?(task: number, attempt: number, slot: number): void;
  onEnd?(end: TaskEnd): void;
  /** Every record as it is written to the record file (a pool worker forwards them to the controller). */
  onRecord?(record: AttemptRecord): void;
}

/**
 * Options for runners that are not alone on their node (pool workers). Without them a runner behaves as it
 * always did: its own starter and slots, and it finishes once its group's tasks are done.
 */
export interface RunnerOptions {
  /** Share this starter (and its slots) with other runners; the runner then never closes it. */
  starter?: ProcessStarter;
  /** The slots of the shared starter (for the GPUs recorded with each start). */
  slots?: Slot[];
  /** Keep running when the queue is empty: more tasks come with `add`, and `close` lets it finish. */
  keepOpen?: boolean;
  /** Tasks handed to the starter ahead of free slots (default: 2 per slot). */
  lookahead?: number;
  /**
   * The name of this runner's segments in the log folder (`<name>.<slot>.out`), when the group writes segments
   * (default: the runner's name). A pool worker's are named by the controller, which records the paths.
   */
  segmentName?: string;
}

/** Final counts of a runner: each task counted once, by its last attempt (or cancelled before starting). */
export type RunnerSummary = Partial<Record<TerminalState, number>>;
