import type { Ledger } from '../ledger/ledger.js';
import type { PollAnswer, RegisterRequest, ReportBatch } from '../protocol/messages.js';
import { ControllerCore } from './core.js';
import type { LiveLaunch, LiveWorker } from './live.js';
import { hasWork, takeAnswer } from './poll-answer.js';
import type { Clock, Log, Signals } from './ports.js';
import { loadState } from './restart.js';
import { ledgerStore } from './store.js';
import { applyReports, type Registered, type Report, registerWorker } from './worker-events.js';

export type { Log };

/** Timings of the controller. */
export interface ControllerOptions {
  /** Seconds between a worker's heartbeats. */
  heartbeat: number;
  /** Seconds of silence after which a worker is lost. */
  lostAfter: number;
  log: Log;
}

/** Task rows made per step while a launch is expanded (between steps, requests are answered). */
const EXPAND_CHUNK = 5000;

const systemClock: Clock = { now: () => Date.now() / 1000, random: Math.random };

/**
 * The controller's shell around its decisions (core.ts): the timers, the parked long-polls of workers and the
 * waiters of `--follow`. Dispatch runs when something changed (a launch, a report, a free slot, a due retry),
 * never on a fixed interval; a 0.5 s tick only looks for silent workers, due retries and cancel requests left in
 * the database by the CLI.
 */
export class Controller {
  readonly core: ControllerCore;
  private readonly polls = new Map<LiveWorker, { answer(a: PollAnswer): void; timer: NodeJS.Timeout }>();
  private readonly waiters = new Map<number, Set<() => void>>();
  private scheduled = false;
  private expanding = false;
  private tick: NodeJS.Timeout | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** Reports waiting to be applied together (see report). */
  private reports: (Report & { resolve(a: { seq: number }): void; reject(err: Error): void })[] = [];

  constructor(
    readonly ledger: Ledger,
    readonly opts: ControllerOptions,
  ) {
    const signals: Signals = {
      dispatchSoon: () => this.schedule(),
      expandSoon: () => this.expandSoon(),
      wake: (w, force) => this.answerPoll(w, force),
      changed: (l) => this.wakeFollowers(l),
      retriesChanged: () => this.armRetryTimer(),
    };
    this.core = new ControllerCore(ledgerStore(ledger), systemClock, signals, opts.log, {
      lostAfter: opts.lostAfter,
    });
  }

  /** The live workers. */
  get workers(): Map<string, LiveWorker> {
    return this.core.workers;
  }

  /** The pool launches with tasks left. */
  get launches(): Map<number, LiveLaunch> {
    return this.core.launches;
  }

  /** Load what the database says is going on, and start the tick. */
  start(): void {
    loadState(this.core);
    this.tick = setInterval(() => this.guard('tick', () => this.core.tick()), 500);
  }

  /** Stop timers and answer parked polls (graceful shutdown: workers reconnect to the next controller). */
  stop(): void {
    this.stopped = true;
    if (this.tick) clearInterval(this.tick);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    for (const w of [...this.polls.keys()]) this.answerPoll(w, true);
    for (const set of this.waiters.values()) for (const f of set) f();
  }

  /** Take a launch just created into memory and start making its task rows. */
  loadLaunch(id: number): LiveLaunch | undefined {
    return this.core.loadLaunch(id);
  }

  /** Act on cancel requests left in the database (by the CLI, or by the cancel route). */
  processCancels(): void {
    this.core.processCancels();
  }

  /** Run dispatch soon (coalesced: many events, one pass). */
  schedule(): void {
    if (this.scheduled || this.stopped) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.guard('dispatch', () => this.core.dispatch());
    });
  }

  /** Make task rows of launches not fully expanded, a chunk at a time, without holding up requests. */
  private expandSoon(): void {
    if (this.expanding || this.stopped) return;
    this.expanding = true;
    setImmediate(() =>
      this.guard('expand', () => {
        this.expanding = false;
        if (this.stopped) return;
        if (this.core.expandStep(EXPAND_CHUNK)) this.expandSoon();
      }),
    );
  }

  private armRetryTimer(): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    const next = this.core.nextRetryAt();
    if (next === undefined || this.stopped) return;
    const ms = Math.max(0, next * 1000 - Date.now()) + 5;
    this.retryTimer = setTimeout(() => this.schedule(), ms);
    this.retryTimer.unref();
  }

  /** Run background work; an error is logged, never the end of the server. */
  private guard(what: string, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.opts.log.error({ event: 'internal-error', what, err: String((err as Error).stack ?? err) });
    }
  }

  // ------------------------------------------------------------------------------------------ --follow

  private wakeFollowers(l: LiveLaunch): void {
    const set = this.waiters.get(l.id);
    if (!set) return;
    this.waiters.delete(l.id);
    for (const f of set) f();
  }

  /** Resolve when launch `id` changes after `version`, or after `waitMs`. */
  waitForChange(id: number, version: number, waitMs: number): Promise<void> {
    const l = this.launches.get(id);
    if (!l || l.version !== version) return Promise.resolve();
    return new Promise((resolve) => {
      let set = this.waiters.get(id);
      if (!set) {
        set = new Set();
        this.waiters.set(id, set);
      }
      const mine = set;
      const done = () => {
        clearTimeout(timer);
        mine.delete(done);
        resolve();
      };
      const timer = setTimeout(done, waitMs);
      mine.add(done);
    });
  }

  // ------------------------------------------------------------------------------------------ workers

  /** A worker registers (first time, or again with its id and secret after the controller or network was away). */
  register(req: RegisterRequest): Registered {
    return registerWorker(this.core, req);
  }

  /** Apply a worker's report: batches after the last applied sequence number, in one transaction. */
  report(w: LiveWorker, batches: ReportBatch[]): Promise<{ seq: number }> {
    // Reports whose bodies were read in the same turn of the event loop are applied together, in one
    // transaction (see applyReports), just after it.
    return new Promise((resolve, reject) => {
      this.reports.push({ w, batches, resolve, reject });
      if (this.reports.length === 1) setImmediate(() => this.applyWaitingReports());
    });
  }

  private applyWaitingReports(): void {
    const waiting = this.reports;
    this.reports = [];
    const answers = applyReports(this.core, waiting);
    waiting.forEach((r, i) => {
      const a = answers[i]!;
      if (a instanceof Error) r.reject(a);
      else r.resolve(a);
    });
  }

  /**
   * A worker asks for work; the answer comes when there is some (or after `waitMs`). A poll whose connection
   * closes (`gone`) is parked no more: what would have answered it (tasks, a launch's settings) waits for the
   * worker's next poll instead of going to no one.
   */
  poll(w: LiveWorker, waitMs: number, gone?: AbortSignal): Promise<PollAnswer> {
    this.core.polled(w);
    this.answerPoll(w, true);
    if (gone?.aborted) return Promise.resolve({ tasks: [], cancel: [] });
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.answerPoll(w, true), waitMs);
      const parked = { answer: resolve, timer };
      this.polls.set(w, parked);
      gone?.addEventListener(
        'abort',
        () => {
          if (this.polls.get(w) !== parked) return;
          this.polls.delete(w);
          clearTimeout(timer);
          resolve({ tasks: [], cancel: [] });
        },
        { once: true },
      );
      if (hasWork(w)) this.answerPoll(w);
      else this.schedule();
    });
  }

  /** Answer a worker's parked poll with what waits for it (with `force`, even with nothing). */
  private answerPoll(w: LiveWorker, force = false): void {
    const p = this.polls.get(w);
    if (!p) return;
    const a = takeAnswer(w, force);
    if (!a) return;
    this.polls.delete(w);
    clearTimeout(p.timer);
    p.answer(a);
  }

  /** Answer a worker's parked poll now if something waits for it (a stop, a cancel). */
  poke(w: LiveWorker): void {
    this.answerPoll(w);
  }

  /** A worker's heartbeat. */
  heartbeat(w: LiveWorker): { stop?: 'drain' | 'stop' } {
    return this.core.heartbeat(w);
  }

  /** A worker leaves (drained, stopped, or its setup failed). */
  leave(id: string, reason: string): void {
    this.core.leave(id, reason);
  }
}
