import fs from 'node:fs';
import path from 'node:path';
import { runnerName } from '../protocol/record-files.js';
import type { AttemptRecord } from '../protocol/records.js';
import type { TerminalState } from '../protocol/states.js';
import { holdHeapBound } from '../util/heap-bound.js';
import { type LongTimeout, setLongTimeout } from '../util/long-timer.js';
import { shortHostname } from '../util/proc.js';
import {
  type Attempt,
  type AttemptContext,
  hasStarted,
  onExited,
  onHold,
  onStarted,
  onStop,
  submitAttempt,
  warnNow,
} from './attempt.js';
import { newCancelRequests } from './cancel-requests.js';
import type { StopCause } from './end-state.js';
import type { GroupFile, GroupTask } from './group.js';
import { endWhenWritten, RecordWriter } from './record-writer.js';
import { notStartedEnd, runnerEndRecord, runnerRecord, skipManyRecord, skipRecord } from './records.js';
import { elementMargin, type Restart, readRestart, runsElementAgain } from './restart.js';
import type { RunnerHooks, RunnerOptions, RunnerSummary } from './runner-types.js';
import { envBeyond, groupEnvironment, runnerSlots } from './setup.js';
import type { Slot } from './slots.js';
import { chooseStarter } from './starters/choose.js';
import type { ProcessExit, ProcessStarter } from './starters/starter.js';
import { type Queued, TaskQueue } from './task-queue.js';

export type { RunnerHooks, RunnerOptions, RunnerSummary, TaskEnd } from './runner-types.js';
export { chooseStarter };

/** Tasks handed to the starter ahead of free slots, per slot, so a freed slot starts the next one at once. */
const LOOKAHEAD_PER_SLOT = 32;
/** How long a task runs before a scheduler's warning reaches it (warnTasks): time to set its signal handler. */
const WARN_SETTLE_MS = 1000;

/**
 * Runs a group of tasks with N slots: each task in its own process group with its own log files and
 * environment, retries with backoff, per-task time limits, GPU pinning per slot, cancellation (TERM, then KILL
 * after a grace period), and one record per start and end appended to its record file.
 */
export class Runner {
  readonly name: string;
  readonly recordsFile: string;
  readonly slots: Slot[];
  /** The attempts not handed to the starter yet. */
  private readonly tasks: TaskQueue;
  /** The attempts the starter has: not started yet, or running. */
  private readonly inFlight = new Set<Attempt>();
  private readonly summary: RunnerSummary = {};
  private readonly writer: RecordWriter;
  private readonly host = shortHostname();
  private readonly starter: ProcessStarter;
  /** What the attempts' handlers use of this runner. */
  private readonly ctx: AttemptContext;
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
  private readonly sharedStarter: boolean;
  private open: boolean;
  /** What this element's earlier runs left, when the scheduler ran it again (runner/restart.ts). */
  private readonly restart: Restart | undefined;
  /** `--requeue` in a cluster element with a time limit: before the limit, its tasks go on in its next run. */
  private readonly elementRequeue: boolean;
  private elementTimer: LongTimeout | undefined;
  /** The element's time is up: nothing more starts here; what is left goes on in the element's next run. */
  private ending = false;
  /** Set when something was left for the element's next run: the runner exits RUN_ELEMENT_AGAIN. */
  private left = false;

  constructor(
    private readonly group: GroupFile,
    private readonly hooks: RunnerHooks = {},
    env: NodeJS.ProcessEnv = process.env,
    private readonly options: RunnerOptions = {},
  ) {
    this.slots = runnerSlots(group, env, options);
    this.sharedStarter = options.starter !== undefined;
    this.open = options.keepOpen === true;
    // A cluster element's runner goes on from what the element's earlier runs recorded, if it ran before.
    this.restart =
      group.termState === 'killed' && !options.keepOpen && !options.starter
        ? readRestart(group, Date.now() / 1000)
        : undefined;
    this.name = runnerName(group.group, this.restart?.run ?? 0, this.host, process.pid);
    this.elementRequeue = runsElementAgain(group, options);
    fs.mkdirSync(group.recordsDir, { recursive: true });
    fs.mkdirSync(group.logDir, { recursive: true });
    this.recordsFile = path.join(group.recordsDir, `${this.name}.jsonl`);
    // Where the tasks' output goes in segments (`<prefix>.<slot>.out`); undefined: a log file per task.
    const segments =
      group.logs === 'segments' ? path.join(group.logDir, options.segmentName ?? this.name) : undefined;
    // While the record file refuses writes (disk full), no task starts: one that did could not be recorded.
    this.writer = new RecordWriter(this.recordsFile, {
      onBlocked: () => this.holdUnstarted(),
      onResumed: () => this.pump(),
    });
    const baseEnv = groupEnvironment(group, env);
    this.tasks = new TaskQueue(
      group.tasks,
      (task) => this.skip(task),
      () => this.pump(),
      this.restart?.next,
    );
    this.starter =
      options.starter ?? chooseStarter(this.slots, baseEnv, group.cwd, env.DROVER_SPAWNER, group.killGrace);
    this.ctx = {
      group,
      starter: this.starter,
      site: { host: this.host, slots: this.slots, logDir: group.logDir, segments },
      // Variables of this group that a shared starter does not have in its environment.
      groupEnv: options.starter ? envBeyond(baseEnv, env) : {},
      hooks,
      // A cluster element's limit counts from the runner's start (within Node's start of the element's); with
      // --requeue the runner's own end comes first, to stop its tasks and have the element run again.
      ...(group.runnerLimit !== undefined
        ? {
            runnerEnd:
              performance.timeOrigin / 1000 +
              group.runnerLimit -
              (this.elementRequeue ? elementMargin(group) : 0),
          }
        : {}),
      record: (r, quiet) => this.record(r, quiet),
    };
  }

  /** More tasks for a runner made with `keepOpen` (they start after those queued). */
  add(tasks: readonly GroupTask[]): void {
    // After the group's own (a pool worker's runners have none).
    this.tasks.add(tasks);
    this.pump();
  }

  /** No more tasks for a `keepOpen` runner: it finishes once those it has are done. */
  close(): void {
    this.open = false;
    this.maybeFinish();
  }

  /** Run every task to an end; resolves with the counts once no task process is left. */
  run(): Promise<RunnerSummary> {
    this.record(runnerRecord(this.name, this.group, this.ctx.site));
    for (const r of this.restart?.records ?? []) this.record(r);
    for (const state of this.restart?.ended ?? []) this.count(state);
    const done = new Promise<RunnerSummary>((resolve) => {
      this.finish = resolve;
    });
    this.cancelPoll = setInterval(() => this.checkCancelRequests(), 2000);
    this.releaseHeap = holdHeapBound();
    this.checkCancelRequests();
    if (this.elementRequeue && this.ctx.runnerEnd !== undefined) {
      this.elementTimer = setLongTimeout(() => this.endElement(), this.ctx.runnerEnd * 1000 - Date.now());
    }
    this.pump();
    return done;
  }

  /** True when the runner stopped for the element's next run to go on (its process exits RUN_ELEMENT_AGAIN). */
  get runsAgain(): boolean {
    return this.left;
  }

  /**
   * The element's time is nearly up (`--requeue`): running attempts are stopped (`timeout`, requeued while their
   * task has requeues left), nothing more starts, and the tasks not started, or to be retried or requeued, are
   * left for the element's next run (runner/restart.ts), which the process asks for by its exit status.
   */
  private endElement(): void {
    this.ending = true;
    if (!this.tasks.empty) this.left = true;
    this.tasks.clear();
    this.stopAll([...this.inFlight], 'element');
    this.maybeFinish();
  }

  /** Stop tasks: queued ones never start, running ones get SIGTERM then SIGKILL; all are recorded `cancelled`. */
  cancel(tasks: readonly number[] | 'all'): void {
    const wanted = tasks === 'all' ? undefined : new Set(tasks);
    if (!wanted) this.cancelledAll = true;
    const hit = (id: number) => !wanted || wanted.has(id);
    this.tasks.removeQueued(
      (q) => hit(q.task.id),
      (q) => this.skip(q.task.id),
    );
    this.tasks.removeWaiting(hit, (id) => this.skip(id));
    if (!wanted) this.skipUntaken();
    else this.tasks.cancelAhead(wanted);
    this.stopAll(
      [...this.inFlight].filter((a) => hit(a.task.id)),
      'cancel',
    );
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
    this.tasks.removeQueued(hit, (q) => this.skip(q.task.id, true));
    const targets = [...this.inFlight].filter(hit);
    for (const a of targets) a.abandoned = true;
    this.stopAll(targets, 'cancel');
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
    this.tasks.skipCancelledAhead();
    this.cancelledAll = true;
    this.tasks.clear();
    this.stopAll([...this.inFlight], 'scheduler');
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
    for (const a of this.inFlight) {
      if (hasStarted(a)) this.starter.signal(a.exec, 'SIGKILL');
      else this.starter.withdraw(a.exec);
    }
    // Tasks the starter started whose start the runner has not heard of yet.
    if (!this.sharedStarter) this.starter.abort();
  }

  /**
   * The scheduler warns of the element's end (Slurm's `--signal=B:`, relayed by the batch script as SIGUSR2):
   * each running task gets the `--signal` warning now, unless its own timer sent it already. Slurm may send it
   * from the element's first second (its timer's resolution is up to a minute), when a task just started may not
   * have set its handler yet and would die of it: a task gets it once it has run WARN_SETTLE_MS.
   */
  warnTasks(): void {
    for (const a of this.inFlight) {
      const ranMs = a.state.kind === 'running' ? performance.now() - a.state.startedMono : WARN_SETTLE_MS;
      if (ranMs >= WARN_SETTLE_MS) warnNow(this.ctx, a);
      else setTimeout(() => warnNow(this.ctx, a), WARN_SETTLE_MS - ranMs).unref();
    }
  }

  /** Read cancel requests the CLI dropped into the cancel folder (also called on SIGUSR1). */
  checkCancelRequests(): void {
    newCancelRequests(this.group.cancelDir, this.seenCancels, (req) => this.cancel(req.tasks));
  }

  /**
   * Stop attempts: first withdraw those not started yet, then signal the running ones, since the starter reads
   * the withdrawals before it reaps the stopped tasks, so none of them starts in a slot the stop frees.
   */
  private stopAll(targets: readonly Attempt[], cause: StopCause): void {
    for (const a of targets) if (!hasStarted(a)) onStop(this.ctx, a, cause);
    for (const a of targets) if (hasStarted(a)) onStop(this.ctx, a, cause);
  }

  /** Record a task cancelled before it started (`quiet`: an abandoned attempt, in the record file only). */
  private skip(task: number, quiet = false): void {
    this.record(skipRecord(task), quiet);
    if (!quiet) this.skipped(task);
  }

  /**
   * Cancel all of the group's tasks not taken yet, as skip-many records of ranges of ids (a launch's tasks are
   * in id order: one range unless a tasklist has gaps), not a skip record per task.
   */
  private skipUntaken(): void {
    this.tasks.drainRanges(
      (id) => this.skipped(id),
      (ranges) => this.record(skipManyRecord(ranges)),
    );
  }

  /** A task the runner was given ends cancelled without starting. */
  private skipped(task: number): void {
    this.count('cancelled');
    this.hooks.onEnd?.(notStartedEnd(task));
  }

  private count(state: TerminalState): void {
    this.summary[state] = (this.summary[state] ?? 0) + 1;
  }

  private pump(): void {
    if (this.ending) {
      this.maybeFinish();
      return;
    }
    const limit = this.options.lookahead ?? this.slots.length * LOOKAHEAD_PER_SLOT;
    while (!this.writer.blocked && this.inFlight.size < limit) {
      const q = this.tasks.next();
      if (!q) break;
      this.submit(q);
    }
    this.maybeFinish();
  }

  private submit(q: Queued): void {
    const a = submitAttempt(this.ctx, q);
    this.inFlight.add(a);
    a.exec.started.then((s) => onStarted(this.ctx, a, s));
    a.exec.exited.then((exit) => this.exited(a, q, exit));
  }

  /** The starter let go of an attempt: queue it again, count it, or retry it. */
  private exited(a: Attempt, q: Queued, exit: ProcessExit | null): void {
    this.inFlight.delete(a);
    const outcome = onExited(this.ctx, a, exit, !this.cancelledAll);
    if (outcome.kind === 'held') this.tasks.putBack(q);
    else if (outcome.kind === 'withdrawn') {
      if (outcome.cancelled) this.skip(q.task.id, a.abandoned);
    } else if (!a.abandoned) {
      const { end } = outcome;
      this.hooks.onEnd?.(end);
      if (this.ending && (end.requeue || end.willRetry)) this.left = true;
      else if (end.requeue) this.tasks.requeue(q);
      else if (end.willRetry) this.tasks.retry(q, this.group.retryDelay);
      else this.count(end.state);
    }
    this.pump();
  }

  /** Take back the tasks handed to the starter that have not started: they wait in the queue. */
  private holdUnstarted(): void {
    for (const a of this.inFlight) onHold(this.ctx, a);
  }

  /** Write a record to the record file and pass it on (`quiet`: to the file only). */
  private record(r: AttemptRecord, quiet = false): void {
    this.writer.write(r);
    if (!quiet) this.hooks.onRecord?.(r);
  }

  private maybeFinish(): void {
    if (!this.finish || (!this.tasks.empty && !this.ending) || this.inFlight.size > 0) return;
    if (this.open && !this.cancelledAll) return;
    if (this.cancelPoll) clearInterval(this.cancelPoll);
    this.elementTimer?.clear();
    this.releaseHeap?.();
    this.record(runnerEndRecord(this.cancelledAll));
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
    else endWhenWritten(this.writer, this.cancelledAll, () => this.whenDone?.());
  }
}
