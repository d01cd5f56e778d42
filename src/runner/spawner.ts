import { spawn } from 'node:child_process';
import fs from 'node:fs';
import type { Slot } from './slots.js';

/**
 * Executors start task processes in slots. The runner submits tasks ahead of free slots; the executor starts
 * each, in submission order, the moment a slot is free, so no round trip through the runner sits between one
 * task's end and the next one's start. Implementations: a fork server in Python or Perl (forkserver.ts), and
 * Node's spawn.
 */

/** What it takes to start one task process. */
export interface TaskRequest {
  argv: string[];
  /** Variables of this task on top of the shared environment (DROVER_TASK_ID, DROVER_ATTEMPT, ...). */
  taskEnv: Record<string, string>;
  cwd: string;
  /** Log files for stdout and stderr (created or truncated). */
  out: string;
  err: string;
}

/** How a task process ended: an exit code, or the signal that ended it. */
export interface ProcessExit {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** When it ended (Unix seconds), as seen by the executor; the runner's clock when absent. */
  at?: number;
}

/** Where and when a task started: its pid (also its process group id), its slot, and the time (Unix seconds). */
export interface ProcessStart {
  pid: number;
  slot: number;
  at?: number;
}

/** A submitted task: when and where it started, and how it ended. */
export interface Execution {
  /** Its pid (also its process group id) and slot once started; null if withdrawn or never started. */
  started: Promise<ProcessStart | null>;
  /** How it ended; null if it was withdrawn before starting. */
  exited: Promise<ProcessExit | null>;
}

/** Starts submitted tasks in free slots. */
export interface Executor {
  submit(req: TaskRequest): Execution;
  /** Withdraw a submitted task that has not started; false if it already started. */
  withdraw(e: Execution): void;
  /** No more submissions: release the executor once its tasks have ended. */
  close(): void;
}

/** The variables a slot gives its tasks. */
export function slotEnv(slot: Slot): Record<string, string> {
  const env: Record<string, string> = { DROVER_SLOT: String(slot.index) };
  if (slot.gpus.length > 0) env.CUDA_VISIBLE_DEVICES = slot.gpus.join(',');
  return env;
}

interface Queued {
  req: TaskRequest;
  e: Execution;
  resolveStarted(v: ProcessStart | null): void;
  resolveExit(v: ProcessExit | null): void;
}

/**
 * Node's spawn: each task in its own process group (so a stop reaches everything it started) with stdout and
 * stderr going straight to its log files. A program that cannot be executed ends as in a shell: exit 127 with
 * the reason in its stderr log. Used when neither Python nor Perl is there (or DROVER_SPAWNER=node).
 */
export class NodeExecutor implements Executor {
  private readonly queue: Queued[] = [];
  private readonly free: Slot[];
  constructor(
    slots: readonly Slot[],
    private readonly baseEnv: NodeJS.ProcessEnv,
  ) {
    this.free = [...slots].reverse();
  }

  submit(req: TaskRequest): Execution {
    let resolveStarted!: Queued['resolveStarted'];
    let resolveExit!: Queued['resolveExit'];
    const e: Execution = {
      started: new Promise((r) => {
        resolveStarted = r;
      }),
      exited: new Promise((r) => {
        resolveExit = r;
      }),
    };
    this.queue.push({ req, e, resolveStarted, resolveExit });
    this.pump();
    return e;
  }

  withdraw(e: Execution): void {
    const i = this.queue.findIndex((q) => q.e === e);
    if (i < 0) return;
    const [q] = this.queue.splice(i, 1);
    q!.resolveStarted(null);
    q!.resolveExit(null);
  }

  close(): void {}

  private pump(): void {
    while (this.free.length > 0 && this.queue.length > 0) this.start(this.queue.shift()!, this.free.pop()!);
  }

  /** Its log files cannot be opened: it ends 126 without running, as with the fork servers. */
  private cannotLog(q: Queued, slot: Slot): void {
    q.resolveStarted(null);
    this.free.push(slot);
    queueMicrotask(() => {
      q.resolveExit({ exitCode: 126, signal: null });
      this.pump();
    });
  }

  private start(q: Queued, slot: Slot): void {
    const { req } = q;
    let out: number;
    let err: number;
    try {
      out = fs.openSync(req.out, 'w');
    } catch {
      this.cannotLog(q, slot);
      return;
    }
    try {
      err = fs.openSync(req.err, 'w');
    } catch {
      fs.closeSync(out);
      this.cannotLog(q, slot);
      return;
    }
    try {
      const child = spawn(req.argv[0]!, req.argv.slice(1), {
        cwd: req.cwd,
        env: { ...this.baseEnv, ...slotEnv(slot), ...req.taskEnv },
        stdio: ['ignore', out, err],
        detached: true,
      });
      const done = (v: ProcessExit) => {
        this.free.push(slot);
        q.resolveExit(v);
        this.pump();
      };
      if (child.pid !== undefined) {
        q.resolveStarted({ pid: child.pid, slot: slot.index });
        child.once('exit', (exitCode, signal) => done({ exitCode, signal }));
      } else {
        child.once('error', (e: NodeJS.ErrnoException) => {
          fs.appendFileSync(req.err, `drover: cannot execute ${req.argv[0]}: ${e.code ?? e.message}\n`);
          q.resolveStarted(null);
          done({ exitCode: e.code === 'ENOENT' ? 127 : 126, signal: null });
        });
      }
    } finally {
      fs.closeSync(out);
      fs.closeSync(err);
    }
  }
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
