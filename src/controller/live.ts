import type { LaunchSettings, PollAnswer, Resources, TaskAssignment, TaskKey } from '../protocol/messages.js';
import type { ReadyTask } from './store.js';

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
  state: 'setup' | 'ready' | 'draining' | 'lost' | 'stopped';
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
  /** Its parked long-poll, answered as soon as there is something for it. */
  poll?: { answer(a: PollAnswer): void; timer: NodeJS.Timeout };
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
  waiters: Set<() => void>;
}

/** The key of a task in `held` maps. */
export function taskKey(launch: number, task: number): string {
  return `${launch}:${task}`;
}
