import { attemptFile } from '../protocol/log-slices.js';
import { type AttemptRecord, nowSec } from '../protocol/records.js';
import { type LongTimeout, setLongTimeout } from '../util/long-timer.js';
import { commandArgv, wrapCommand } from './command.js';
import { endState, isRetried, type StopCause, type WaitStatus } from './end-state.js';
import type { GroupFile } from './group.js';
import { attemptEnd, attemptLogFiles, endRecord, type RecordSite, startRecord } from './records.js';
import { requeueOf } from './requeue.js';
import type { RunnerHooks, TaskEnd } from './runner-types.js';
import type { Execution, ProcessExit, ProcessStart, ProcessStarter } from './starters/starter.js';
import type { Queued } from './task-queue.js';

/**
 * One attempt of a task from the moment the runner hands it to its starter until its process is gone: a state
 * (a tagged union, each state with its own data) changed only by the `on…` handlers below, which write the
 * attempt's records as it goes. What the runner does next (retry, count, queue again) is its own business: the
 * handler of the exit tells it what became of the attempt.
 */

/** When an attempt's process started: its pid, the time (unix seconds) and the runner's monotonic clock (ms). */
export interface Started {
  pid: number;
  startedAt: number;
  /**
   * The runner's monotonic clock when it learnt of the start: the end, when no starter stamps it, is `startedAt`
   * plus the time since, so an attempt never ends before it started whatever the wall clock does.
   */
  startedMono: number;
}

/** Where an attempt is, as the runner knows it. */
export type AttemptState =
  /** Handed to the starter, which starts it once a slot is free. */
  | { kind: 'submitted' }
  /** Withdrawn because its records could not be written (disk full): it goes back in the queue. */
  | { kind: 'held' }
  /** Stopped before it started, so withdrawn; should it start meanwhile, it is stopped at once. */
  | { kind: 'withdrawing'; cause: StopCause }
  /** Its process runs. */
  | ({ kind: 'running' } & Started)
  /** Its process group was sent SIGTERM (SIGKILL follows after the grace period). */
  | ({ kind: 'stopping'; cause: StopCause } & Started)
  /** Its process is gone and its end is recorded (or it never started). */
  | { kind: 'ended' };

/** An attempt handed to the starter. */
export interface Attempt extends Queued {
  exec: Execution;
  state: AttemptState;
  /** Its time limit and the SIGKILL after a stop's grace period: cleared when it ends. */
  timers: LongTimeout[];
  /** No longer this runner's to report (abandon): its records go to the record file only. */
  abandoned: boolean;
  /** It was sent the `--signal` warning (once per attempt, whoever asks again). */
  warned?: boolean;
}

/** What an attempt's handlers use of the runner that runs it. */
export interface AttemptContext {
  readonly group: GroupFile;
  readonly starter: ProcessStarter;
  readonly site: RecordSite;
  /** Variables of the group that a shared starter does not have in its environment. */
  readonly groupEnv: Record<string, string>;
  readonly hooks: RunnerHooks;
  /** When the runner's own time ends (a cluster element's limit), Unix seconds; undefined: never. */
  readonly runnerEnd?: number;
  /** Write a record to the record file and pass it on (`quiet`: to the file only). */
  record(r: AttemptRecord, quiet: boolean): void;
}

/** What became of an attempt once the starter let go of it, for its runner to act on. */
export type AttemptOutcome =
  /** Held back and never started: it goes back in the queue. */
  | { kind: 'held' }
  /** Withdrawn before it started; `cancelled`: it counts as a task cancelled before it started. */
  | { kind: 'withdrawn'; cancelled: boolean }
  /** It ran, or was tried and could not start: its start and end are recorded. */
  | { kind: 'ended'; end: TaskEnd };

/** True once the attempt's process has started (and until it is gone). */
export function hasStarted(a: Attempt): boolean {
  return a.state.kind === 'running' || a.state.kind === 'stopping';
}

/** Hand an attempt to the starter: its command, environment, working folder and logs. */
export function submitAttempt(ctx: AttemptContext, q: Queued): Attempt {
  const { task, attempt } = q;
  const { group, site } = ctx;
  const command = wrapCommand(task.command, group.header, group.footer);
  const limit = {
    ...(group.taskTimeout !== undefined ? { seconds: group.taskTimeout } : {}),
    ...(ctx.runnerEnd !== undefined ? { until: ctx.runnerEnd } : {}),
  };
  const exec = ctx.starter.submit({
    argv: commandArgv(command),
    taskEnv: {
      ...ctx.groupEnv,
      ...task.env,
      DROVER_TASK_ID: String(task.id),
      DROVER_ATTEMPT: String(attempt),
      // Where the attempt may leave a JSON object as its result (drover results), beside its logs.
      DROVER_RESULT_FILE: attemptFile(site.logDir, task.id, attempt, 'result'),
      // After a requeue: resume from the checkpoint the earlier attempt left.
      ...(q.requeues ? { DROVER_RESUME: '1' } : {}),
    },
    cwd: group.cwd,
    logs: site.segments ? { segments: site.segments } : attemptLogFiles(site.logDir, task.id, attempt),
    ...(limit.seconds !== undefined || limit.until !== undefined ? { limit } : {}),
  });
  return { ...q, exec, state: { kind: 'submitted' }, timers: [], abandoned: false };
}

/** The starter started the attempt's process (null: it never will). */
export function onStarted(ctx: AttemptContext, a: Attempt, s: ProcessStart | null): void {
  if (s === null) return;
  const was = a.state;
  if (was.kind !== 'submitted' && was.kind !== 'held' && was.kind !== 'withdrawing') return;
  const started: Started = { pid: s.pid, startedAt: s.at ?? nowSec(), startedMono: performance.now() };
  a.state =
    was.kind === 'withdrawing'
      ? { kind: 'stopping', cause: was.cause, ...started }
      : { kind: 'running', ...started };
  const facts = { pid: s.pid, slot: s.slot, at: started.startedAt, segment: s.segment };
  ctx.record(startRecord(ctx.site, a.task.id, a.attempt, facts), a.abandoned);
  if (!a.abandoned) ctx.hooks.onStart?.(a.task.id, a.attempt, s.slot);
  if (a.state.kind === 'stopping') signalStop(ctx, a);
  else if (ctx.group.taskTimeout !== undefined) {
    a.timers.push(setLongTimeout(() => onStop(ctx, a, 'timeout'), ctx.group.taskTimeout * 1000));
  }
  if (a.state.kind === 'running') warnBeforeLimit(ctx, a, a.state);
}

/**
 * `--signal`: the warning, once, to the task's process group TIME before its limit (the nearer of its own and
 * the runner's end), at once if it starts with less time left. It may exit; if not, its limit ends it.
 */
function warnBeforeLimit(ctx: AttemptContext, a: Attempt, started: Started): void {
  const warn = ctx.group.warnSignal;
  if (warn === undefined) return;
  const own = ctx.group.taskTimeout !== undefined ? ctx.group.taskTimeout * 1000 : Number.POSITIVE_INFINITY;
  // The runner's end on its monotonic clock (performance.now() counts from performance.timeOrigin).
  const runner =
    ctx.runnerEnd !== undefined
      ? ctx.runnerEnd * 1000 - performance.timeOrigin - started.startedMono
      : Number.POSITIVE_INFINITY;
  const left = Math.min(own, runner);
  if (!Number.isFinite(left)) return;
  a.timers.push(setLongTimeout(() => warnNow(ctx, a), Math.max(0, left - warn.seconds * 1000)));
}

/** Send a running attempt the `--signal` warning now, unless it had it: by its timer or the scheduler's. */
export function warnNow(ctx: AttemptContext, a: Attempt): void {
  const warn = ctx.group.warnSignal;
  if (warn === undefined || a.warned || a.state.kind !== 'running') return;
  a.warned = true;
  ctx.starter.signal(a.exec, warn.signal);
}

/** The runner stops the attempt: withdrawn if it has not started, else SIGTERM, SIGKILL after the grace period. */
export function onStop(ctx: AttemptContext, a: Attempt, cause: StopCause): void {
  const was = a.state;
  if (was.kind === 'submitted' || was.kind === 'held') {
    a.state = { kind: 'withdrawing', cause };
    ctx.starter.withdraw(a.exec); // if it starts meanwhile, it is stopped as soon as its pid is known
  } else if (was.kind === 'running') {
    a.state = { ...was, kind: 'stopping', cause };
    signalStop(ctx, a);
  }
}

/** Records cannot be written: an attempt not started yet is taken back, to start when they can. */
export function onHold(ctx: AttemptContext, a: Attempt): void {
  if (a.state.kind !== 'submitted' && a.state.kind !== 'held') return;
  a.state = { kind: 'held' };
  ctx.starter.withdraw(a.exec);
}

/**
 * The starter let go of the attempt: withdrawn (`exit` null), or its process is gone. An attempt that could not
 * be started is recorded all the same: its start is the starter's try, on the clock of its end. `retries`: the
 * runner still retries tasks (it is not cancelling everything).
 */
export function onExited(
  ctx: AttemptContext,
  a: Attempt,
  exit: ProcessExit | null,
  retries: boolean,
): AttemptOutcome {
  for (const t of a.timers) t.clear();
  const was = a.state;
  a.state = { kind: 'ended' };
  if (exit === null) {
    if (was.kind === 'held') return { kind: 'held' };
    // Withdrawn before it started; one the scheduler stopped gets no record (reconciliation says what it was).
    return { kind: 'withdrawn', cancelled: !(was.kind === 'withdrawing' && was.cause === 'scheduler') };
  }
  const { task, attempt } = a;
  let started: Started;
  let cause: StopCause | null = null;
  if (was.kind === 'running' || was.kind === 'stopping') {
    started = was;
    if (was.kind === 'stopping') cause = was.cause;
  } else {
    // It could not be started (the runner heard of its try and its end together).
    started = { pid: 0, startedAt: exit.triedAt ?? nowSec(), startedMono: performance.now() };
    if (was.kind === 'withdrawing') cause = was.cause;
    const facts = { pid: 0, slot: exit.slot ?? -1, at: started.startedAt, segment: exit.segment };
    ctx.record(startRecord(ctx.site, task.id, attempt, facts), a.abandoned);
  }
  const stop = exit.serverLost && cause === null ? 'server' : cause;
  const found = endState(stop, waitStatus(exit), ctx.group.taskTimeout);
  const goOn = retries && !a.abandoned;
  const limitHit = stop === 'timeout' || stop === 'element';
  const { end, requeue } = requeueOf(ctx.group, found, limitHit, a.requeues ?? 0, goOn);
  const next = requeue
    ? 'requeue'
    : isRetried(end.state) && a.retry < ctx.group.retries && goOn
      ? 'retry'
      : null;
  const at = exit.at ?? Math.ceil(started.startedAt * 1000 + performance.now() - started.startedMono) / 1000;
  ctx.record(endRecord(ctx.site, task.id, attempt, at, end, next, exit.segment), a.abandoned);
  const seconds = Math.max(0, at - started.startedAt);
  return { kind: 'ended', end: attemptEnd(ctx.site, task.id, attempt, end, seconds, next) };
}

/** SIGTERM to the attempt's process group, SIGKILL after the grace period (through the starter: see signal). */
function signalStop(ctx: AttemptContext, a: Attempt): void {
  ctx.starter.signal(a.exec, 'SIGTERM');
  a.timers.push(setLongTimeout(() => ctx.starter.signal(a.exec, 'SIGKILL'), ctx.group.killGrace * 1000));
}

/** How a process ended, as the exit-status table reads it. */
function waitStatus(exit: ProcessExit): WaitStatus {
  if (exit.signal !== null) return { signal: exit.signal };
  return exit.exitCode !== null ? { code: exit.exitCode } : 'unknown';
}
