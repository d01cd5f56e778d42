import fs from 'node:fs';
import path from 'node:path';
import { attemptFile, segmentLogs } from '../protocol/log-slices.js';
import {
  type AttemptRecord,
  nowSec,
  RECORDS_VERSION,
  SKIP_MANY_RANGES,
  type StartRecord,
} from '../protocol/records.js';
import type { TerminalState } from '../protocol/states.js';
import { holdHeapBound } from '../util/heap-bound.js';
import { RangeBuilder } from '../util/id-ranges.js';
import { type LongTimeout, setLongTimeout } from '../util/long-timer.js';
import { processStartTime, shortHostname } from '../util/proc.js';
import { DEFAULT_BACKOFF, retryDelay } from './backoff.js';
import { commandArgv, wrapCommand } from './command.js';
import { endState, isRetried, type StopCause, type WaitStatus } from './end-state.js';
import type { CancelRequest, GroupFile, GroupTask } from './group.js';
import { RecordWriter } from './record-writer.js';
import { cpusAvailable, parseVisibleGpus, planSlots, type Slot } from './slots.js';
import { ForkServerStarter, findPython, perlAvailable } from './starters/fork-server.js';
import { NodeSpawnStarter } from './starters/node-spawn.js';
import type { Execution, ProcessExit, ProcessStarter, SegmentSpan } from './starters/starter.js';

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
  willRetry: boolean;
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

interface Queued {
  task: GroupTask;
  attempt: number;
  retry: number;
}

interface InFlight extends Queued {
  exec: Execution;
  pid: number | null;
  stopReason: StopCause | null;
  timers: LongTimeout[];
  /** Withdrawn before it started because its records could not be written: it goes back in the queue. */
  held?: boolean;
  /** When it started (unix seconds), once it has. */
  startedAt?: number;
  /** The runner's monotonic clock (ms) when it learnt of the start: its end, when no starter stamps it, is
   * `startedAt` plus the time since, so an attempt never ends before it started whatever the wall clock does. */
  startedMono?: number;
  /** No longer this runner's to report (abandon): its records go to the record file only. */
  abandoned?: boolean;
}

/** Tasks handed to the starter ahead of free slots, per slot, so a freed slot starts the next one at once. */
const LOOKAHEAD_PER_SLOT = 32;

/**
 * How long a stopped runner (Ctrl-C, SIGTERM, `drover cancel`) waits for space to write the records it keeps
 * before it saves them under the temporary folder and ends: a stop signal often comes once (`timeout`, a
 * scheduler, systemd, which kill for good soon after), so waiting for space without end would lose them all.
 */
const STOPPED_WAIT_MS = 10_000;

/**
 * Runs a group of tasks with N slots: each task in its own process group with its own log files and
 * environment, retries with backoff, per-task time limits, GPU pinning per slot, cancellation (TERM, then KILL
 * after a grace period), and one record per start and end appended to its record file.
 */
export class Runner {
  readonly name: string;
  readonly recordsFile: string;
  readonly slots: Slot[];
  /** Tasks to run before the group's own: retries due, tasks held back, tasks added to a kept-open runner. */
  private readonly queue: Queued[] = [];
  /**
   * The group's tasks not handed out yet, taken as slots free up (a task file is read a chunk at a time, so a
   * runner holds a few of a million tasks); undefined once all are taken.
   */
  private pending: Iterator<GroupTask> | undefined;
  /** Tasks a cancel request named that are still in `pending`: skipped when their turn comes. */
  private readonly cancelledAhead = new Set<number>();
  private readonly waiting = new Map<number, { q: Queued; timer: NodeJS.Timeout }>();
  private readonly inFlight = new Set<InFlight>();
  private readonly summary: RunnerSummary = {};
  private readonly writer: RecordWriter;
  private readonly host = shortHostname();
  private readonly starter: ProcessStarter;
  private readonly seenCancels = new Set<string>();
  private cancelledAll = false;
  /** Told to stop at once (a second signal): it does not wait for space to write its last records. */
  private aborted = false;
  /** Set while every task is done and only the last records wait for space to be written. */
  private whenDone: (() => void) | undefined;
  private finish: ((s: RunnerSummary) => void) | undefined;
  private cancelPoll: NodeJS.Timeout | undefined;
  /** Lets go of the heap bound the runner holds while it runs. */
  private releaseHeap: (() => void) | undefined;
  /** Variables of this group that a shared starter does not have in its environment. */
  private readonly groupEnv: Record<string, string> = {};
  private readonly sharedStarter: boolean;
  private open: boolean;
  /** Where the tasks' output goes in segments (`<prefix>.<slot>.out`); undefined: a log file per task. */
  private readonly segments: string | undefined;

  constructor(
    private readonly group: GroupFile,
    private readonly hooks: RunnerHooks = {},
    env: NodeJS.ProcessEnv = process.env,
    private readonly options: RunnerOptions = {},
  ) {
    this.slots =
      options.slots ??
      planSlots({
        cpusAvailable: cpusAvailable(),
        cpusPerTask: group.cpusPerTask,
        maxTasks: group.maxTasks,
        gpusPerTask: group.gpusPerTask,
        visibleGpus: parseVisibleGpus(env.CUDA_VISIBLE_DEVICES),
        ...(options.keepOpen ? {} : { tasks: group.tasks.length }),
      });
    this.sharedStarter = options.starter !== undefined;
    this.open = options.keepOpen === true;
    this.name = `g${group.group}.${this.host}.${process.pid}`;
    fs.mkdirSync(group.recordsDir, { recursive: true });
    fs.mkdirSync(group.logDir, { recursive: true });
    this.recordsFile = path.join(group.recordsDir, `${this.name}.jsonl`);
    this.segments =
      group.logs === 'segments' ? path.join(group.logDir, options.segmentName ?? this.name) : undefined;
    // While the record file refuses writes (disk full), no task starts: one that did could not be recorded.
    this.writer = new RecordWriter(this.recordsFile, {
      onBlocked: () => this.holdUnstarted(),
      onResumed: () => this.pump(),
    });
    const baseEnv: NodeJS.ProcessEnv = {
      ...env,
      ...group.env,
      DROVER_JOBNAME: group.job,
      DROVER_LAUNCH: String(group.launch),
    };
    if (group.venv) {
      baseEnv.VIRTUAL_ENV = group.venv;
      baseEnv.PATH = `${path.join(group.venv, 'bin')}:${env.PATH ?? ''}`;
    }
    this.pending = group.tasks[Symbol.iterator]();
    if (options.starter) {
      for (const [k, v] of Object.entries(baseEnv)) if (v !== undefined && env[k] !== v) this.groupEnv[k] = v;
      this.starter = options.starter;
    } else {
      this.starter = chooseStarter(this.slots, baseEnv, group.cwd, env.DROVER_SPAWNER, group.killGrace);
    }
  }

  /** More tasks for a runner made with `keepOpen` (they start after those queued). */
  add(tasks: readonly GroupTask[]): void {
    // After the group's own (a pool worker's runners have none).
    this.drainPending((q) => this.queue.push(q));
    for (const task of tasks) this.queue.push({ task, attempt: task.attempt, retry: 0 });
    this.pump();
  }

  /** No more tasks for a `keepOpen` runner: it finishes once those it has are done. */
  close(): void {
    this.open = false;
    this.maybeFinish();
  }

  /** Run every task to an end; resolves with the counts once no task process is left. */
  run(): Promise<RunnerSummary> {
    this.record({
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
    this.releaseHeap = holdHeapBound();
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
    if (!wanted) this.skipUntaken();
    else if (this.pending) for (const id of wanted) this.cancelledAhead.add(id);
    // Withdraw tasks not started yet before signalling running ones: the starter reads the withdrawals
    // before it reaps the stopped tasks, so none of them starts in a slot the stop frees.
    const targets = [...this.inFlight].filter((f) => hit(f.task.id));
    for (const f of targets) if (f.pid === null) this.stop(f, 'cancel');
    for (const f of targets) if (f.pid !== null) this.stop(f, 'cancel');
    this.maybeFinish();
  }

  /**
   * Stop these attempts and report nothing more of them: they are no longer this runner's (a pool worker's
   * attempts that the controller took back). Queued ones never start; running ones get SIGTERM, then SIGKILL
   * after the grace period. What becomes of them is written to the record file (the runner's own journal), never
   * passed to the hooks.
   */
  abandon(attempts: readonly { task: number; attempt: number }[]): void {
    const wanted = new Set(attempts.map((a) => `${a.task}:${a.attempt}`));
    const hit = (q: Queued) => wanted.has(`${q.task.id}:${q.attempt}`);
    for (let i = this.queue.length - 1; i >= 0; i--) {
      const q = this.queue[i]!;
      if (!hit(q)) continue;
      this.queue.splice(i, 1);
      this.skip(q.task.id, true);
    }
    const targets = [...this.inFlight].filter(hit);
    for (const f of targets) f.abandoned = true;
    for (const f of targets) if (f.pid === null) this.stop(f, 'cancel');
    for (const f of targets) if (f.pid !== null) this.stop(f, 'cancel');
    this.maybeFinish();
  }

  /**
   * The runner got SIGTERM. With `termState` `cancelled` (a local launch) this is a cancel of everything.
   * With `killed` (a scheduler stopping the element) the tasks with a cancel request are cancelled (drover cancel
   * asks for the stop with them), the other running ones are stopped and recorded `killed`, and tasks that never
   * started get no record: reconciliation with the scheduler says what became of them.
   */
  terminate(): void {
    if ((this.group.termState ?? 'cancelled') === 'cancelled') {
      this.cancel('all');
      return;
    }
    this.checkCancelRequests();
    // Of the tasks not handed out yet, those a cancel request named are recorded cancelled (it asked for them).
    while (this.cancelledAhead.size > 0 && this.takePending());
    this.cancelledAll = true;
    this.queue.length = 0;
    this.dropPending();
    for (const w of this.waiting.values()) clearTimeout(w.timer);
    this.waiting.clear();
    const targets = [...this.inFlight];
    for (const f of targets) if (f.pid === null) this.stop(f, 'scheduler');
    for (const f of targets) if (f.pid !== null) this.stop(f, 'scheduler');
    this.maybeFinish();
  }

  /**
   * Stop everything at once (a second interrupt): tasks not started never start, running ones get SIGKILL now,
   * and each is recorded as `terminate` records it (`cancelled` for a local launch).
   */
  abort(): void {
    this.aborted = true;
    // Finished already, and only waiting for space to write its last records: stop waiting.
    if (this.whenDone) {
      this.whenDone();
      return;
    }
    this.terminate();
    for (const f of this.inFlight) {
      if (f.pid !== null) this.starter.signal(f.exec, 'SIGKILL');
      else this.starter.withdraw(f.exec);
    }
    // Tasks the starter started whose start the runner has not heard of yet.
    if (!this.sharedStarter) this.starter.abort();
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

  /** Record a task cancelled before it started (`quiet`: an abandoned attempt, in the record file only). */
  private skip(task: number, quiet = false): void {
    this.record({ type: 'skip', task, at: nowSec(), state: 'cancelled' }, quiet);
    if (!quiet) this.skipped(task);
  }

  /**
   * Cancel all of the group's tasks not taken yet, as skip-many records of up to SKIP_MANY_RANGES ranges each
   * (a launch's tasks are in id order: one range unless a tasklist has gaps), not a skip record per task.
   */
  private skipUntaken(): void {
    const ids = new RangeBuilder();
    const flush = () => {
      if (ids.length === 0) return;
      this.record({ type: 'skip-many', ranges: ids.take(), at: nowSec(), state: 'cancelled' });
    };
    this.drainPending((q) => {
      ids.add(q.task.id);
      this.skipped(q.task.id);
      if (ids.length >= SKIP_MANY_RANGES) flush();
    });
    flush();
  }

  /** A task the runner was given ends cancelled without starting. */
  private skipped(task: number): void {
    this.count('cancelled');
    this.hooks.onEnd?.({
      task,
      attempt: 0,
      state: 'cancelled',
      exitCode: null,
      signal: null,
      seconds: null,
      err: null,
      willRetry: false,
    });
  }

  private count(state: TerminalState): void {
    this.summary[state] = (this.summary[state] ?? 0) + 1;
  }

  private pump(): void {
    const limit = this.options.lookahead ?? this.slots.length * LOOKAHEAD_PER_SLOT;
    while (!this.writer.blocked && this.inFlight.size < limit) {
      const q = this.queue.shift() ?? this.takePending();
      if (!q) break;
      this.submit(q);
    }
    this.maybeFinish();
  }

  /** The group's next task to run (those a cancel request named are recorded `cancelled` on the way). */
  private takePending(): Queued | undefined {
    while (this.pending) {
      let next: IteratorResult<GroupTask>;
      try {
        next = this.pending.next();
      } catch (err) {
        // A damaged task file: the tasks before the damage ran; those after it never start and have no record
        // (the launch's check of its runner records them cancelled once the runner is gone).
        process.stderr.write(`drover: ${(err as Error).message}: the tasks after it do not run\n`);
        this.dropPending();
        return undefined;
      }
      if (next.done) {
        this.dropPending();
        return undefined;
      }
      const task = next.value;
      if (this.cancelledAhead.delete(task.id)) this.skip(task.id);
      else return { task, attempt: task.attempt, retry: 0 };
    }
    return undefined;
  }

  /** Take every one of the group's tasks not taken yet. */
  private drainPending(each: (q: Queued) => void): void {
    for (let q = this.takePending(); q; q = this.takePending()) each(q);
  }

  /** No more of the group's tasks are taken (all taken, or the runner is stopping): its file is closed. */
  private dropPending(): void {
    this.pending?.return?.();
    this.pending = undefined;
    this.cancelledAhead.clear();
  }

  private submit(q: Queued): void {
    const { task, attempt } = q;
    const segments = this.segments;
    const logDir = this.group.logDir;
    const files = {
      out: attemptFile(logDir, task.id, attempt, 'out'),
      err: attemptFile(logDir, task.id, attempt, 'err'),
    };
    // Where the attempt's output went, as its start record says it: its files, or its slot's segments and where
    // it begins in them (nothing when the segments could not be opened).
    const logsOf = (
      slot: number,
      span: SegmentSpan | undefined,
    ): Pick<StartRecord, 'out' | 'err' | 'out_off' | 'err_off' | 'seq'> => {
      if (!segments) return files;
      return span ? segmentLogs(segments, slot, span) : { out: '', err: '' };
    };
    const command = wrapCommand(task.command, this.group.header, this.group.footer);
    const exec = this.starter.submit({
      argv: commandArgv(command),
      taskEnv: {
        ...this.groupEnv,
        ...task.env,
        DROVER_TASK_ID: String(task.id),
        DROVER_ATTEMPT: String(attempt),
        // Where the attempt may leave a JSON object as its result (drover results), beside its logs.
        DROVER_RESULT_FILE: attemptFile(logDir, task.id, attempt, 'result'),
      },
      cwd: this.group.cwd,
      logs: segments ? { segments } : files,
    });
    const f: InFlight = { ...q, exec, pid: null, stopReason: null, timers: [] };
    this.inFlight.add(f);
    let slot = -1;
    exec.started.then((s) => {
      if (s === null) return;
      f.pid = s.pid;
      slot = s.slot;
      f.startedAt = s.at ?? nowSec();
      f.startedMono = performance.now();
      const gpus = this.slots[s.slot]?.gpus ?? [];
      this.record(
        {
          type: 'start',
          task: task.id,
          attempt,
          at: f.startedAt,
          pid: s.pid,
          slot: s.slot,
          gpus: gpus.length > 0 ? gpus.join(',') : null,
          host: this.host,
          ...logsOf(s.slot, s.segment),
        },
        f.abandoned,
      );
      if (!f.abandoned) this.hooks.onStart?.(task.id, attempt, s.slot);
      if (f.stopReason !== null) this.signalStop(f);
      else if (this.group.taskTimeout !== undefined) {
        f.timers.push(setLongTimeout(() => this.stop(f, 'timeout'), this.group.taskTimeout * 1000));
      }
    });
    exec.exited.then((exit) => {
      for (const t of f.timers) t.clear();
      this.inFlight.delete(f);
      if (exit === null) {
        // Held back while records cannot be written: it starts when they can.
        if (f.held && f.stopReason === null) this.queue.unshift(q);
        else if (f.stopReason !== 'scheduler') this.skip(task.id, f.abandoned); // withdrawn before it started
        this.pump();
        return;
      }
      if (f.pid === null) {
        // It could not be started: record the attempt and its failure all the same.
        if (exit.slot !== undefined) slot = exit.slot;
        const gpus = this.slots[slot]?.gpus ?? [];
        // Its start is the starter's try, on the clock of its end (the runner heard of both later).
        f.startedAt = exit.triedAt ?? nowSec();
        f.startedMono = performance.now();
        this.record(
          {
            type: 'start',
            task: task.id,
            attempt,
            at: f.startedAt,
            pid: 0,
            slot,
            gpus: gpus.length > 0 ? gpus.join(',') : null,
            host: this.host,
            ...logsOf(slot, exit.segment),
          },
          f.abandoned,
        );
      }
      const stop = exit.serverLost && f.stopReason === null ? 'server' : f.stopReason;
      const end = endState(stop, waitStatus(exit), this.group.taskTimeout);
      const willRetry =
        isRetried(end.state) && q.retry < this.group.retries && !this.cancelledAll && !f.abandoned;
      const at = exit.at ?? Math.ceil(f.startedAt! * 1000 + performance.now() - f.startedMono!) / 1000;
      this.record(
        {
          type: 'end',
          task: task.id,
          attempt,
          at,
          ...end,
          ...(willRetry ? { retry: true } : {}),
          ...(segments && exit.segment?.outEnd !== undefined
            ? { out_end: exit.segment.outEnd, err_end: exit.segment.errEnd! }
            : {}),
        },
        f.abandoned,
      );
      if (f.abandoned) {
        this.pump();
        return;
      }
      this.hooks.onEnd?.({
        task: task.id,
        attempt,
        state: end.state,
        exitCode: end.exit_code,
        signal: end.signal,
        ...(end.reason !== undefined ? { reason: end.reason } : {}),
        seconds: f.startedAt !== undefined ? Math.max(0, at - f.startedAt) : null,
        err: segments ? null : files.err,
        willRetry,
      });
      if (willRetry) this.scheduleRetry({ task, attempt: attempt + 1, retry: q.retry + 1 });
      else this.count(end.state);
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

  /** Take back the tasks handed to the starter that have not started: they wait in the queue. */
  private holdUnstarted(): void {
    for (const f of this.inFlight) {
      if (f.pid !== null || f.stopReason !== null) continue;
      f.held = true;
      this.starter.withdraw(f.exec);
    }
  }

  private stop(f: InFlight, reason: StopCause): void {
    if (f.stopReason !== null) return;
    f.stopReason = reason;
    if (f.pid !== null) this.signalStop(f);
    else this.starter.withdraw(f.exec); // if it starts meanwhile, it is stopped as soon as its pid is known
  }

  /** SIGTERM to the task's process group, SIGKILL after the grace period (through the starter: see signal). */
  private signalStop(f: InFlight): void {
    this.starter.signal(f.exec, 'SIGTERM');
    f.timers.push(setLongTimeout(() => this.starter.signal(f.exec, 'SIGKILL'), this.group.killGrace * 1000));
  }

  /** Write a record to the record file and pass it on (`quiet`: to the file only). */
  private record(r: AttemptRecord, quiet = false): void {
    this.writer.write(r);
    if (!quiet) this.hooks.onRecord?.(r);
  }

  private maybeFinish(): void {
    if (
      !this.finish ||
      this.queue.length > 0 ||
      this.pending ||
      this.waiting.size > 0 ||
      this.inFlight.size > 0
    )
      return;
    if (this.open && !this.cancelledAll) return;
    if (this.cancelPoll) clearInterval(this.cancelPoll);
    this.releaseHeap?.();
    this.record({ type: 'runner-end', at: nowSec(), reason: this.cancelledAll ? 'cancelled' : 'done' });
    if (!this.sharedStarter) this.starter.close();
    const finish = this.finish;
    this.finish = undefined;
    // Done only once every record is in the file: records that could not be written wait for space — unless
    // the user insisted (abort): then what is still unwritten is saved when the process exits (RecordWriter).
    this.whenDone = () => {
      this.whenDone = undefined;
      this.writer.close();
      finish(this.summary);
    };
    if (this.aborted) this.whenDone();
    else {
      this.writer.whenWritten(() => this.whenDone?.());
      if (this.cancelledAll && this.writer.blocked) {
        process.stderr.write(
          `drover: stopping: waiting up to ${STOPPED_WAIT_MS / 1000} s for space to write the last records, then saving them in the temporary folder\n`,
        );
        setTimeout(() => this.whenDone?.(), STOPPED_WAIT_MS);
      }
    }
  }
}

/**
 * The fastest way to start tasks that this machine has: the Python spawn server (posix_spawn, Python 3.8+),
 * else the Perl fork server, else Node's spawn. DROVER_SPAWNER=python|perl|node forces one.
 */
export function chooseStarter(
  slots: readonly Slot[],
  baseEnv: NodeJS.ProcessEnv,
  cwd: string,
  wanted: string | undefined,
  killGrace = 5,
): ProcessStarter {
  if (wanted === 'node') return new NodeSpawnStarter(slots, baseEnv, killGrace);
  if (wanted !== 'perl') {
    const python = findPython();
    if (python)
      return new ForkServerStarter(slots, baseEnv, cwd, { kind: 'python', interpreter: python }, killGrace);
    if (wanted === 'python') throw new Error('DROVER_SPAWNER=python: no Python 3.8 or later found');
  }
  if (wanted === 'perl' || perlAvailable())
    return new ForkServerStarter(slots, baseEnv, cwd, { kind: 'perl', interpreter: 'perl' }, killGrace);
  return new NodeSpawnStarter(slots, baseEnv, killGrace);
}

/** How a process ended, as the exit-status table reads it. */
function waitStatus(exit: ProcessExit): WaitStatus {
  if (exit.signal !== null) return { signal: exit.signal };
  return exit.exitCode !== null ? { code: exit.exitCode } : 'unknown';
}
