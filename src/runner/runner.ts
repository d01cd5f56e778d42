import fs from 'node:fs';
import path from 'node:path';
import type { TerminalState } from '../ledger/states.js';
import { DEFAULT_BACKOFF, retryDelay } from './backoff.js';
import { commandArgv, wrapCommand } from './command.js';
import type { CancelRequest, GroupFile, GroupTask } from './group.js';
import { processStartTime, shortHostname } from './proc.js';
import { nowSec, RECORDS_VERSION, RecordWriter } from './records.js';
import { cpusAvailable, parseVisibleGpus, planSlots, type Slot } from './slots.js';
import { signalGroup, startProcess } from './spawner.js';

/** What the runner tells its caller as it goes (for live progress). */
export interface RunnerHooks {
  onStart?(task: number, attempt: number, slot: number): void;
  onEnd?(
    task: number,
    attempt: number,
    state: TerminalState,
    exitCode: number | null,
    willRetry: boolean,
  ): void;
}

/** Final counts of a runner: each task counted once, by its last attempt (or cancelled before starting). */
export type RunnerSummary = Partial<Record<TerminalState, number>>;

interface Queued {
  task: GroupTask;
  attempt: number;
  retry: number;
}

interface Running extends Queued {
  pid: number | null;
  slot: Slot;
  stopReason: 'timeout' | 'cancel' | null;
  timers: NodeJS.Timeout[];
}

/**
 * Runs a group of tasks with N slots: each task in its own process group with its own log files and
 * environment, retries with backoff, per-task time limits, GPU pinning per slot, cancellation (TERM, then KILL
 * after a grace period), and one record per start and end appended to its record file.
 */
export class Runner {
  readonly name: string;
  readonly recordsFile: string;
  readonly slots: Slot[];
  private readonly queue: Queued[] = [];
  private readonly waiting = new Map<number, { q: Queued; timer: NodeJS.Timeout }>();
  private readonly running = new Map<number, Running>();
  private readonly free: Slot[];
  private readonly summary: RunnerSummary = {};
  private readonly writer: RecordWriter;
  private readonly host = shortHostname();
  private readonly baseEnv: NodeJS.ProcessEnv;
  private readonly seenCancels = new Set<string>();
  private cancelledAll = false;
  private finish: ((s: RunnerSummary) => void) | undefined;
  private cancelPoll: NodeJS.Timeout | undefined;

  constructor(
    private readonly group: GroupFile,
    private readonly hooks: RunnerHooks = {},
    env: NodeJS.ProcessEnv = process.env,
  ) {
    this.slots = planSlots({
      cpusAvailable: cpusAvailable(),
      cpusPerTask: group.cpusPerTask,
      maxTasks: group.maxTasks,
      gpusPerTask: group.gpusPerTask,
      visibleGpus: parseVisibleGpus(env.CUDA_VISIBLE_DEVICES),
    });
    this.free = [...this.slots].reverse();
    this.name = `g${group.group}.${this.host}.${process.pid}`;
    fs.mkdirSync(group.recordsDir, { recursive: true });
    fs.mkdirSync(group.logDir, { recursive: true });
    this.recordsFile = path.join(group.recordsDir, `${this.name}.jsonl`);
    this.writer = new RecordWriter(this.recordsFile);
    this.baseEnv = { ...env, ...group.env, DROVER_JOBNAME: group.job, DROVER_LAUNCH: String(group.launch) };
    if (group.venv) {
      this.baseEnv.VIRTUAL_ENV = group.venv;
      this.baseEnv.PATH = `${path.join(group.venv, 'bin')}:${env.PATH ?? ''}`;
    }
    for (const task of group.tasks) this.queue.push({ task, attempt: task.attempt, retry: 0 });
  }

  /** Run every task to an end; resolves with the counts once no task process is left. */
  run(): Promise<RunnerSummary> {
    this.writer.write({
      type: 'runner',
      v: RECORDS_VERSION,
      runner: this.name,
      launch: this.group.launch,
      job: this.group.job,
      host: this.host,
      pid: process.pid,
      pid_start: processStartTime(process.pid),
      slots: this.slots.length,
      at: nowSec(),
    });
    const done = new Promise<RunnerSummary>((resolve) => {
      this.finish = resolve;
    });
    this.cancelPoll = setInterval(() => this.checkCancelRequests(), 2000);
    this.checkCancelRequests();
    this.pump();
    return done;
  }

  /** Stop tasks: queued ones never start, running ones get SIGTERM then SIGKILL; all are recorded `cancelled`. */
  cancel(tasks: readonly number[] | 'all'): void {
    const wanted = tasks === 'all' ? undefined : new Set(tasks);
    if (!wanted) this.cancelledAll = true;
    const hit = (id: number) => !wanted || wanted.has(id);
    for (let i = this.queue.length - 1; i >= 0; i--) {
      const q = this.queue[i]!;
      if (!hit(q.task.id)) continue;
      this.queue.splice(i, 1);
      this.skip(q.task.id);
    }
    for (const [id, w] of this.waiting) {
      if (!hit(id)) continue;
      clearTimeout(w.timer);
      this.waiting.delete(id);
      this.skip(id);
    }
    for (const r of this.running.values()) if (hit(r.task.id)) this.stop(r, 'cancel');
    this.maybeFinish();
  }

  /** Read cancel requests the CLI dropped into the cancel folder (also called on SIGUSR1). */
  checkCancelRequests(): void {
    let names: string[];
    try {
      names = fs.readdirSync(this.group.cancelDir);
    } catch {
      return;
    }
    for (const name of names) {
      if (!name.endsWith('.json') || this.seenCancels.has(name)) continue;
      this.seenCancels.add(name);
      try {
        const req = JSON.parse(
          fs.readFileSync(path.join(this.group.cancelDir, name), 'utf8'),
        ) as CancelRequest;
        this.cancel(req.tasks);
      } catch {
        // A request being written right now is read on the next check.
        this.seenCancels.delete(name);
      }
    }
  }

  private skip(task: number): void {
    this.writer.write({ type: 'skip', task, at: nowSec(), state: 'cancelled' });
    this.count('cancelled');
    this.hooks.onEnd?.(task, 0, 'cancelled', null, false);
  }

  private count(state: TerminalState): void {
    this.summary[state] = (this.summary[state] ?? 0) + 1;
  }

  private pump(): void {
    while (this.free.length > 0 && this.queue.length > 0) this.start(this.queue.shift()!, this.free.pop()!);
    this.maybeFinish();
  }

  private start(q: Queued, slot: Slot): void {
    const { task, attempt } = q;
    const out = path.join(this.group.logDir, `${task.id}.${attempt}.out`);
    const err = path.join(this.group.logDir, `${task.id}.${attempt}.err`);
    const env: NodeJS.ProcessEnv = {
      ...this.baseEnv,
      DROVER_TASK_ID: String(task.id),
      DROVER_ATTEMPT: String(attempt),
      DROVER_SLOT: String(slot.index),
    };
    if (slot.gpus.length > 0) env.CUDA_VISIBLE_DEVICES = slot.gpus.join(',');
    const command = wrapCommand(task.command, this.group.header, this.group.footer);
    const started = startProcess({ argv: commandArgv(command), env, cwd: this.group.cwd, out, err });
    const r: Running = { ...q, pid: started.pid, slot, stopReason: null, timers: [] };
    const key = started.pid ?? -task.id;
    this.running.set(key, r);
    this.writer.write({
      type: 'start',
      task: task.id,
      attempt,
      at: nowSec(),
      pid: started.pid ?? 0,
      slot: slot.index,
      gpus: slot.gpus.length > 0 ? slot.gpus.join(',') : null,
      host: this.host,
      out,
      err,
    });
    this.hooks.onStart?.(task.id, attempt, slot.index);
    if (this.group.taskTimeout !== undefined && started.pid !== null) {
      r.timers.push(setTimeout(() => this.stop(r, 'timeout'), this.group.taskTimeout * 1000));
    }
    started.exited.then(({ exitCode, signal }) => {
      for (const t of r.timers) clearTimeout(t);
      // What the stopped task left behind in its group goes too.
      if (r.stopReason !== null && r.pid !== null) signalGroup(r.pid, 'SIGKILL');
      this.running.delete(key);
      this.free.push(slot);
      let state: TerminalState;
      if (r.stopReason === 'cancel') state = 'cancelled';
      else if (r.stopReason === 'timeout') state = 'timeout';
      else if (signal) state = 'killed';
      else state = exitCode === 0 ? 'succeeded' : 'failed';
      const willRetry =
        state !== 'succeeded' && state !== 'cancelled' && q.retry < this.group.retries && !this.cancelledAll;
      this.writer.write({
        type: 'end',
        task: task.id,
        attempt,
        at: nowSec(),
        state,
        exit_code: exitCode,
        signal,
        ...(r.stopReason === 'timeout' ? { reason: `time limit of ${this.group.taskTimeout} s` } : {}),
      });
      this.hooks.onEnd?.(task.id, attempt, state, exitCode, willRetry);
      if (willRetry) this.scheduleRetry({ task, attempt: attempt + 1, retry: q.retry + 1 });
      else this.count(state);
      this.pump();
    });
  }

  private scheduleRetry(q: Queued): void {
    const delay = retryDelay(q.retry, { ...DEFAULT_BACKOFF, base: this.group.retryDelay });
    const timer = setTimeout(() => {
      this.waiting.delete(q.task.id);
      this.queue.unshift(q);
      this.pump();
    }, delay * 1000);
    this.waiting.set(q.task.id, { q, timer });
  }

  private stop(r: Running, reason: 'timeout' | 'cancel'): void {
    if (r.stopReason !== null || r.pid === null) return;
    r.stopReason = reason;
    signalGroup(r.pid, 'SIGTERM');
    const pid = r.pid;
    r.timers.push(setTimeout(() => signalGroup(pid, 'SIGKILL'), this.group.killGrace * 1000));
  }

  private maybeFinish(): void {
    if (!this.finish || this.queue.length > 0 || this.waiting.size > 0 || this.running.size > 0) return;
    if (this.cancelPoll) clearInterval(this.cancelPoll);
    this.writer.write({ type: 'runner-end', at: nowSec(), reason: this.cancelledAll ? 'cancelled' : 'done' });
    this.writer.close();
    const finish = this.finish;
    this.finish = undefined;
    finish(this.summary);
  }
}
