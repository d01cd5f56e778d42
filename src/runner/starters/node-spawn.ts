import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import { segmentFile } from '../../protocol/log-slices.js';
import { processStartTime } from '../../util/proc.js';
import { programText } from '../programs.js';
import type { Slot } from '../slots.js';
import { SegmentFiles } from './segment-files.js';
import {
  type Execution,
  limitEnv,
  type ProcessExit,
  type ProcessStart,
  type ProcessStarter,
  type SegmentSpan,
  signalGroup,
  slotEnv,
  type TaskRequest,
} from './starter.js';
import { StreamTap } from './stream-tap.js';

interface Queued {
  req: TaskRequest;
  e: Execution;
  resolveStarted(v: ProcessStart | null): void;
  resolveExit(v: ProcessExit | null): void;
}

/**
 * The guard (programs/guard.cjs): told of each task's start and end, it stops the tasks left when the runner dies.
 * Its own session keeps it out of whatever kills the runner's process group.
 */
class Guard {
  private readonly child: ChildProcess;
  private open = true;
  constructor(killGrace: number) {
    this.child = spawn(process.execPath, ['-e', programText('guard.cjs'), String(killGrace)], {
      detached: true,
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    this.child.on('error', () => {});
    this.child.stdin!.on('error', () => {});
  }
  started(pid: number): void {
    if (this.open) this.child.stdin!.write(`+${pid} ${processStartTime(pid) ?? ''}\n`);
  }
  ended(pid: number): void {
    if (this.open) this.child.stdin!.write(`-${pid}\n`);
  }
  close(): void {
    if (!this.open) return;
    this.open = false;
    this.child.stdin!.end();
  }
}

/**
 * Node's spawn: each task in its own process group (so a stop reaches everything it started) with stdout and
 * stderr going straight to its log files, or in segments through pipes of its own (StreamTap). A program that cannot be executed ends as in a shell: exit 127 with
 * the reason in its stderr log. Used when neither Python nor Perl is there (or DROVER_SPAWNER=node).
 */
export class NodeSpawnStarter implements ProcessStarter {
  private readonly queue: Queued[] = [];
  private readonly free: Slot[];
  private readonly running = new Map<Execution, ChildProcess>();
  private readonly guard: Guard;
  private readonly segments = new SegmentFiles();
  private closed = false;

  constructor(
    slots: readonly Slot[],
    private readonly baseEnv: NodeJS.ProcessEnv,
    killGrace = 5,
  ) {
    this.free = [...slots].reverse();
    this.guard = new Guard(killGrace);
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

  signal(e: Execution, signal: NodeJS.Signals): void {
    const child = this.running.get(e);
    // Node reaps a child and sets its exit code in one callback: while both are null, its pid is its own.
    if (child?.pid !== undefined && child.exitCode === null && child.signalCode === null)
      signalGroup(child.pid, signal);
  }

  abort(): void {
    for (const q of this.queue.splice(0)) {
      q.resolveStarted(null);
      q.resolveExit(null);
    }
    for (const e of this.running.keys()) this.signal(e, 'SIGKILL');
  }

  close(): void {
    this.closed = true;
    if (this.running.size > 0) return;
    this.guard.close();
    this.segments.close();
  }

  private pump(): void {
    while (this.free.length > 0 && this.queue.length > 0) this.start(this.queue.shift()!, this.free.pop()!);
  }

  /** Its log files cannot be opened: it ends 126 without running, as with the fork servers. */
  private cannotLog(q: Queued, slot: Slot): void {
    q.resolveStarted(null);
    this.free.push(slot);
    queueMicrotask(() => {
      q.resolveExit({ exitCode: 126, signal: null, slot: slot.index });
      this.pump();
    });
  }

  /** The task's stdout and stderr descriptors (its own files, or its slot's segments); null when they cannot be opened. */
  private openLogs(
    req: TaskRequest,
    slot: Slot,
  ): { out: number; err: number; errFile: string; span?: SegmentSpan; own: boolean } | null {
    const logs = req.logs;
    if ('segments' in logs) {
      try {
        const errFile = segmentFile(logs.segments, slot.index, 'err');
        return { ...this.segments.begin(logs.segments, slot.index), errFile, own: false };
      } catch {
        return null;
      }
    }
    let out: number;
    try {
      out = fs.openSync(logs.out, 'w');
    } catch {
      return null;
    }
    try {
      return { out, err: fs.openSync(logs.err, 'w'), errFile: logs.err, own: true };
    } catch {
      fs.closeSync(out);
      return null;
    }
  }

  private start(q: Queued, slot: Slot): void {
    const { req } = q;
    const logs = this.openLogs(req, slot);
    if (!logs) {
      this.cannotLog(q, slot);
      return;
    }
    const { span } = logs;
    const ended = (): { segment?: SegmentSpan } => {
      if (!span || !('segments' in req.logs)) return {};
      const full = this.segments.end(req.logs.segments, slot.index, span);
      return full ? { segment: full } : {};
    };
    const done = (v: ProcessExit) => {
      this.free.push(slot);
      q.resolveExit(v);
      this.pump();
    };
    // Appended by name (a segment is opened for appending too): its slot starts nothing before this ends.
    const cannotExecute = (e: NodeJS.ErrnoException) => {
      fs.appendFileSync(logs.errFile, `drover: cannot execute ${req.argv[0]}: ${e.code ?? e.message}\n`);
      q.resolveStarted(null);
      done({ exitCode: e.code === 'ENOENT' ? 127 : 126, signal: null, slot: slot.index, ...ended() });
    };
    try {
      let child: ReturnType<typeof spawn>;
      try {
        child = spawn(req.argv[0]!, req.argv.slice(1), {
          cwd: req.cwd,
          env: {
            ...this.baseEnv,
            ...slotEnv(slot),
            ...req.taskEnv,
            ...(req.limit ? limitEnv(req.limit, Date.now() / 1000) : {}),
          },
          // In segments, pipes of its own, cut when it ends (StreamTap); else its own log files.
          stdio: ['ignore', span ? 'pipe' : logs.out, span ? 'pipe' : logs.err],
          detached: true,
        });
      } catch (e) {
        // Node throws some of exec's refusals (E2BIG: a command line too long) instead of emitting them.
        queueMicrotask(() => cannotExecute(e as NodeJS.ErrnoException));
        return;
      }
      const pid = child.pid;
      const taps =
        span && pid !== undefined
          ? [new StreamTap(child.stdout!, logs.out), new StreamTap(child.stderr!, logs.err)]
          : [];
      if (pid === undefined) {
        child.stdout?.destroy();
        child.stderr?.destroy();
      }
      if (pid !== undefined) {
        this.running.set(q.e, child);
        this.guard.started(pid);
        q.resolveStarted({ pid, slot: slot.index, ...(span ? { segment: span } : {}) });
        child.once('exit', (exitCode, signal) => {
          // What it left in its group goes with it. It was reaped in this very callback: for its pid to be
          // another group's already, the kernel's pid counter would have to wrap onto it within microseconds.
          signalGroup(pid, 'SIGKILL');
          for (const tap of taps) tap.cut(); // before the ends are taken: they are what the attempt wrote
          this.running.delete(q.e);
          this.guard.ended(pid);
          if (this.closed && this.running.size === 0) this.close();
          done({ exitCode, signal: signal === null ? null : os.constants.signals[signal], ...ended() });
        });
      } else {
        child.once('error', cannotExecute);
      }
    } finally {
      // The task has its own copies; a slot's segments stay open for its next task.
      if (logs.own) for (const fd of [logs.out, logs.err]) fs.closeSync(fd);
    }
  }
}
