import type { ReadyTask } from '../ledger/pool-launches.js';
import type { WorkerState } from '../ledger/pool-workers.js';
import type { LaunchSettings, Resources, TaskAssignment, TaskKey } from '../protocol/messages.js';

/**
 * The controller's plain state: the live workers and the pool launches with tasks left, as its decisions
 * (core.ts) keep them in memory. Their rows are in the ledger; nothing here holds a timer or a request.
 */

/** A task handed to a worker and not ended. */
export interface HeldTask {
  launch: number;
  task: number;
  attempt: number;
  demand: Resources;
  /** Its start was reported. */
  started: boolean;
  /** When it started (unix s), once reported. */
  startedAt?: number;
}

/** A worker as the controller keeps it in memory (its row is in pool_workers). */
export interface LiveWorker {
  id: string;
  pool: string;
  host: string;
  pid: number;
  slots: number;
  capacity: Resources;
  state: WorkerState;
  /** Unix seconds of its first registration (scaling down drains the oldest idle workers first). */
  registeredAt: number;
  /** sha256 of its session secret (hex); null for a worker the controller never registered. */
  secretHash: string | null;
  /** The scheduler array element it runs in, if any. */
  element: string | null;
  /** Unix seconds of its last request. */
  lastSeen: number;
  /** A report of it is being received or applied (one at a time). */
  reporting: boolean;
  /** `launch:task` → the task. */
  held: Map<string, HeldTask>;
  /** Waiting to be sent with the next poll answer. */
  outTasks: TaskAssignment[];
  outCancel: TaskKey[];
  /** Asked to drain (finish, then exit) or stop (now). */
  stop?: 'drain' | 'stop';
  /** It registered with this controller (workers loaded from the database after a restart have not, yet). */
  registered: boolean;
  /** Launches whose settings it was sent. */
  sentSettings: Set<number>;
}

/** A pool launch with tasks left, as the controller keeps it in memory. */
export interface LiveLaunch {
  id: number;
  jobId: number;
  job: string;
  pool: string;
  demand: Resources;
  retries: number;
  retryDelay: number;
  numJobs: number | null;
  settings: LaunchSettings;
  total: number;
  /** Tasks not ended in this launch (queued, waiting to retry, held, or not expanded yet). */
  remaining: number;
  /** Tasks ready to hand out, in order (retries first, then fresh ones by id). */
  ready: ReadyTask[];
  /** Fresh tasks with ids <= this are in `ready` or were handed out. */
  scanFrom: number;
  /** True when no fresh task is left in the database beyond scanFrom (until more are expanded). */
  freshDone: boolean;
  /** True once all its launch_tasks rows exist. */
  expanded: boolean;
  /** Tasks waiting to retry: task → attempt, tries, not before. */
  retryWaiting: Map<number, { attempt: number; tries: number; notBefore: number; command?: string }>;
  inFlight: number;
  /** Moving average of its attempts' durations (seconds), or undefined before the first one ended. */
  avgSeconds: number | undefined;
  /** Bumped on every change, for --follow. */
  version: number;
}

/** The key of a task in `held` maps. */
export function taskKey(launch: number, task: number): string {
  return `${launch}:${task}`;
}
