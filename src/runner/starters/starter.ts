import type { Slot } from '../slots.js';

/**
 * Process starters start task processes in slots. The runner submits tasks ahead of free slots; the starter starts
 * each, in submission order, the moment a slot is free, so no round trip through the runner sits between one
 * task's end and the next one's start. Implementations: a fork server in Python or Perl (fork-server.ts), and
 * Node's spawn (node-spawn.ts).
 */

/** What it takes to start one task process. */
export interface TaskRequest {
  argv: string[];
  /** Variables of this task on top of the shared environment (DROVER_TASK_ID, DROVER_ATTEMPT, ...). */
  taskEnv: Record<string, string>;
  cwd: string;
  logs: TaskLogs;
  /** Its time limit, which the starter tells it at its start (DROVER_TIME_LEFT_S, DROVER_DEADLINE); none if omitted. */
  limit?: TaskLimit;
}

/**
 * A task's time limit as the runner knows it before the task starts: seconds from its start (`--task-timeout`),
 * and the end of the runner's own time (a cluster element's limit, Unix seconds); the nearer one counts.
 */
export interface TaskLimit {
  seconds?: number;
  until?: number;
}

/** DROVER_TIME_LEFT_S (whole seconds) and DROVER_DEADLINE (Unix seconds) of a task starting at `now`. */
export function limitEnv(limit: TaskLimit, now: number): Record<string, string> {
  const end = Math.min(
    now + (limit.seconds ?? Number.POSITIVE_INFINITY),
    limit.until ?? Number.POSITIVE_INFINITY,
  );
  return {
    DROVER_TIME_LEFT_S: String(Math.max(0, Math.floor(end - now))),
    DROVER_DEADLINE: String(Math.floor(end)),
  };
}

/**
 * The limit as the fork servers take it (spawn-server.py, fork-server.pl): the variable `DROVER_LIMIT=S,U`
 * among the task's, either field empty, which they replace by limitEnv's two at the task's start.
 */
export function limitPair(limit: TaskLimit): string {
  return `DROVER_LIMIT=${limit.seconds ?? ''},${limit.until ?? ''}`;
}

/**
 * Where a task's output goes: its own two log files (created or truncated), or the segments of the slot it runs
 * in, `<segments>.<slot>.out` and `.err` (appended to; src/protocol/log-slices.ts), with their index.
 */
export type TaskLogs = { out: string; err: string } | { segments: string };

/** Where a task's output begins (and, once it has ended, ends) in its slot's segments. */
export interface SegmentSpan {
  /** Its number among the tasks of these segments: its entry in their index. */
  seq: number;
  outOff: number;
  errOff: number;
  outEnd?: number;
  errEnd?: number;
}

/** How a task process ended: an exit code, or the number of the signal that ended it. */
export interface ProcessExit {
  exitCode: number | null;
  signal: number | null;
  /** When it ended (Unix seconds), as seen by the starter; the runner's clock when absent. */
  at?: number;
  /** The slot of a task that could not be started (its `started` is null): it ends 126 or 127 there. */
  slot?: number;
  /** When the starter tried to start a task that could not be started, on the clock of `at`. */
  triedAt?: number;
  /** The starter's process server died while the task ran: the runner stopped it (SERVER_LOST), its status is unknown. */
  serverLost?: true;
  /** Output in segments: where it went, ends included (absent when the server died). */
  segment?: SegmentSpan;
}

/** Where and when a task started: its pid (also its process group id), its slot, and the time (Unix seconds). */
export interface ProcessStart {
  pid: number;
  slot: number;
  at?: number;
  /** Output in segments: where it begins. */
  segment?: SegmentSpan;
}

/** A submitted task: when and where it started, and how it ended. */
export interface Execution {
  /** Its pid (also its process group id) and slot once started; null if withdrawn or never started. */
  started: Promise<ProcessStart | null>;
  /** How it ended; null if it was withdrawn before starting. */
  exited: Promise<ProcessExit | null>;
}

/**
 * Starts submitted tasks in free slots. When a task's process ends, what it left in its process group is
 * killed. Whatever ends the runner (SIGKILL of its whole process group included), the starter's tasks do
 * not outlive it: they are stopped (SIGTERM, SIGKILL after the grace) by a process in another session.
 */
export interface ProcessStarter {
  submit(req: TaskRequest): Execution;
  /** Withdraw a submitted task that has not started; false if it already started. */
  withdraw(e: Execution): void;
  /**
   * Send `signal` to a started task's process group, unless it has ended: only the starter knows when a
   * task's pid is reaped and may be given to another process.
   */
  signal(e: Execution, signal: NodeJS.Signals): void;
  /** Stop at once: SIGKILL every running task's group and withdraw every task not started. */
  abort(): void;
  /** No more submissions: release the starter once its tasks have ended. */
  close(): void;
}

/** The variables a slot gives its tasks. */
export function slotEnv(slot: Slot): Record<string, string> {
  const env: Record<string, string> = { DROVER_SLOT: String(slot.index) };
  if (slot.gpus.length > 0) env.CUDA_VISIBLE_DEVICES = slot.gpus.join(',');
  return env;
}

/** Send `signal` to a task's whole process group; false if it is already gone. */
export function signalGroup(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}
