import type { Applied } from '../ledger/apply-records.js';
import type { PoolLaunchRow, ReadyTask } from '../ledger/pool-launches.js';
import type { WorkerFields, WorkerRow, WorkerState } from '../ledger/pool-workers.js';
import type { AttemptRecord } from '../protocol/records.js';
import type { LiveLaunch, LiveWorker } from './live.js';

/**
 * What the controller's decisions (core.ts) need from around them, as interfaces: the store of its state (the
 * ledger, store.ts), a clock, a log, and the shell that owns timers and parked requests (controller.ts). In a
 * test each is a plain object.
 */

/** Structured log of the controller (pino's interface). */
export interface Log {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** Time and chance, as the decisions see them. */
export interface Clock {
  /** Unix seconds now. */
  now(): number;
  /** A number in [0, 1) (retry jitter). */
  random(): number;
}

/** What the decisions ask of the shell around them: it owns the timers and the parked polls. */
export interface Signals {
  /** Run dispatch soon (coalesced: many asks, one pass). */
  dispatchSoon(): void;
  /** Make launch task rows soon, a chunk at a time (core.expandStep). */
  expandSoon(): void;
  /** Something waits for this worker: answer its parked poll, if any (with `force`, even with nothing). */
  wake(w: LiveWorker, force?: boolean): void;
  /** A launch changed (its version moved): wake whoever follows it. */
  changed(l: LiveLaunch): void;
  /** The earliest retry may have moved (core.nextRetryAt): set the timer again. */
  retriesChanged(): void;
}

/** A task some worker holds, as the store keeps it. */
export interface HeldRow {
  launch: number;
  task: number;
  attempt: number;
  worker: string;
}

/** What the decisions read from and write to the ledger; every change is a named ledger transition. */
export interface ControllerStore {
  /** Run `fn` in one transaction. */
  transaction<T>(fn: () => T): T;

  /** The open pool launches' ids, oldest first. */
  openLaunches(): number[];
  /** A pool launch's own row and its job, or undefined when it is not a pool launch. */
  poolLaunch(id: number): { row: PoolLaunchRow; jobId: number; job: string } | undefined;
  /** How many task rows a launch has and how many of them are queued or running. */
  tally(launchId: number): { made: number; left: number };
  /** Tasks of a launch waiting to retry. */
  waiting(launchId: number): { task: number; attempt: number; tries: number; notBefore: number }[];
  /** Tasks held by workers, of every launch. */
  held(): HeldRow[];
  /** Make up to `limit` more task rows of a launch; returns how many. */
  expand(launchId: number, limit: number): number;
  /** Queued tasks of a launch after task `after`, never handed out, in id order. */
  freshTasks(l: LiveLaunch, after: number, limit: number): ReadyTask[];
  /** A task's command. */
  command(l: LiveLaunch, task: number): string;
  /** True when the attempt's start is recorded. */
  started(l: LiveLaunch, task: number, attempt: number): boolean;
  /** The attempt and tries of a task held or waiting in a launch. */
  poolTask(l: LiveLaunch, task: number): { attempt: number; tries: number } | undefined;
  /** How many of a task's attempts in a launch were requeued (`--requeue`). */
  requeues(l: LiveLaunch, task: number): number;

  /** Hand a queued task to a worker; false when it is not queued any more. */
  assign(l: LiveLaunch, t: ReadyTask, worker: string): boolean;
  /** A task is tried again later as `nextAttempt`, not before `notBefore`. */
  requeue(l: LiveLaunch, task: number, nextAttempt: number, notBefore: number): void;
  /** A lost attempt that `--requeue` runs again is marked so (its task counts the requeue). */
  markRequeued(l: LiveLaunch, task: number, attempt: number): void;
  /** A task its attempt's end record queued again (`--requeue`) waits to run as `nextAttempt`. */
  requeueQueued(l: LiveLaunch, task: number, nextAttempt: number): void;
  /** A task handed out and never started waits again. */
  unassign(l: LiveLaunch, task: number): void;
  /**
   * A task handed to a worker lost before it reported the start: that attempt is `lost` (it may have run), and
   * the task waits again as the next attempt. Returns whether it was recorded (the task was still held so).
   */
  loseUnreported(
    l: LiveLaunch,
    t: { task: number; attempt: number; host: string; at: number; reason: string },
  ): boolean;
  /** A task is done in its launch. */
  finish(l: LiveLaunch, task: number): void;
  /** A started attempt is lost. */
  markLost(l: LiveLaunch, task: number, reason: string): void;
  /** Apply a worker's records of one launch. */
  applyRecords(l: LiveLaunch, records: readonly AttemptRecord[]): Applied;
  /** Close a launch with nothing left; returns whether it closed. */
  closeIfDone(l: LiveLaunch): boolean;

  /** A worker's row, or undefined. */
  worker(id: string): WorkerRow | undefined;
  /** The rows of workers not lost or stopped. */
  liveWorkers(): WorkerRow[];
  /** A new worker id, unique in the store (from the `secret` the worker chose, when that id is free). */
  newWorkerId(host: string, pid: number, secret: string): string;
  /** A new worker's row. */
  addWorker(row: WorkerFields & Pick<WorkerRow, 'id' | 'pool' | 'secret_hash'>, now: number): void;
  /** A worker registered again. */
  updateWorker(id: string, f: WorkerFields, now: number): void;
  /** Set a worker's state (and why). */
  setWorkerState(id: string, state: WorkerState, reason?: string): void;
  /** The last report sequence number applied for a worker. */
  workerSeq(id: string): number;
  /** A worker's report up to `seq` was applied at `now`. */
  setWorkerSeq(id: string, seq: number, now: number): void;

  /** Cancel requests not acted on yet. */
  pendingCancels(): { id: number; launch: number; tasks: number[] | 'all' }[];
  /** A cancel request was acted on. */
  cancelDone(id: number): void;
}
