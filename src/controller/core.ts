import type { LaunchSettings, TaskAssignment } from '../protocol/messages.js';
import type { TerminalState } from '../protocol/states.js';
import { inRuns, planDispatch } from './dispatch.js';
import { type LiveLaunch, type LiveWorker, taskKey } from './live.js';
import { afterAttempt, silentWorkers } from './policy.js';
import type { Clock, ControllerStore, Log, Signals } from './ports.js';
import { launchViews, workerViews } from './views.js';

/** Tasks of a launch kept ready in memory (refilled from the store when a quarter is left). */
const BUFFER = 1000;

/** Settings of the decisions. */
export interface CoreOptions {
  /** Seconds of silence after which a worker is lost. */
  lostAfter: number;
}

/**
 * The controller's decisions over its plain state (live workers and launches with tasks left): which worker
 * gets which task, when a worker is lost, what is retried or requeued, when a launch is done, and what a poll is
 * answered. Every change of state is written to the store in one transaction before anyone is told. It holds no
 * timer and no request: it asks the shell (`signals`) to run dispatch soon, to wake a worker's parked poll, or
 * to set the retry timer. Beside it, over the same state: loading it after a restart (restart.ts), what the
 * workers say (worker-events.ts), a poll's answer (poll-answer.ts) and the pool commands (pool-commands.ts).
 */
export class ControllerCore {
  readonly workers = new Map<string, LiveWorker>();
  readonly launches = new Map<number, LiveLaunch>();
  /** Each pool's worker time limit in seconds (its scheduler's), for pools that have one. */
  readonly timeLimits = new Map<string, number>();

  constructor(
    readonly store: ControllerStore,
    readonly clock: Clock,
    readonly signals: Signals,
    readonly log: Log,
    readonly opts: CoreOptions,
  ) {}

  // ------------------------------------------------------------------------------------------ launches

  /** Take a launch just created (or found open at start) into memory; its task rows are made soon after. */
  loadLaunch(id: number): LiveLaunch | undefined {
    const pl = this.store.poolLaunch(id);
    if (!pl) return undefined;
    const { row } = pl;
    const l: LiveLaunch = {
      id,
      jobId: pl.jobId,
      job: pl.job,
      pool: row.pool,
      demand: { cpus: row.cpus, gpus: row.gpus, mem_mb: row.mem_mb },
      retries: row.retries,
      retryDelay: row.retry_delay,
      numJobs: row.num_jobs,
      settings: JSON.parse(row.settings) as LaunchSettings,
      total: row.total,
      remaining: 0,
      ready: [],
      scanFrom: row.cursor,
      freshDone: false,
      expanded: false,
      retryWaiting: new Map(),
      inFlight: 0,
      avgSeconds: undefined,
      version: 0,
    };
    this.launches.set(id, l);
    this.reloadQueue(l, row.cursor);
    this.signals.expandSoon();
    this.signals.dispatchSoon();
    return l;
  }

  /** Re-read a launch's queue from the store (after a cancel changed it behind our back). */
  private reloadQueue(l: LiveLaunch, cursor = this.store.poolLaunch(l.id)?.row.cursor ?? l.scanFrom): void {
    const { made, left } = this.store.tally(l.id);
    l.expanded = made >= l.total;
    l.remaining = left + (l.total - made);
    l.ready = [];
    l.scanFrom = cursor;
    l.freshDone = false;
    l.retryWaiting.clear();
    for (const r of this.store.waiting(l.id)) {
      l.retryWaiting.set(r.task, { attempt: r.attempt, tries: r.tries, notBefore: r.notBefore });
    }
    this.bump(l);
  }

  /**
   * Make up to `chunk` task rows of the first launch not fully expanded. Returns true when some launch may
   * still need more (call again).
   */
  expandStep(chunk: number): boolean {
    const l = [...this.launches.values()].find((x) => !x.expanded);
    if (!l) return false;
    const n = this.store.transaction(() => this.store.expand(l.id, chunk));
    if (n < chunk) l.expanded = true;
    if (n > 0) {
      l.freshDone = false;
      this.signals.dispatchSoon();
    }
    return true;
  }

  private bump(l: LiveLaunch): void {
    l.version++;
    this.signals.changed(l);
  }

  // ------------------------------------------------------------------------------------------ dispatch

  /**
   * Hand out what fits: due retries first, then fresh tasks, as planDispatch decides; the assignments are
   * written in one transaction, then the workers that got some are woken.
   */
  dispatch(): void {
    const now = this.clock.now();
    for (const l of this.launches.values()) {
      for (const [task, r] of l.retryWaiting) {
        if (r.notBefore > now) continue;
        l.retryWaiting.delete(task);
        l.ready.unshift({
          task,
          attempt: r.attempt,
          tries: r.tries,
          command: r.command ?? this.store.command(l, task),
        });
      }
      if (l.ready.length < BUFFER / 4 && !l.freshDone) {
        const more = this.store.freshTasks(l, l.scanFrom, BUFFER);
        if (more.length > 0) l.scanFrom = more[more.length - 1]!.task;
        if (more.length < BUFFER && l.expanded) l.freshDone = true;
        l.ready.push(...more);
      }
    }
    const plan = planDispatch(
      workerViews(this.workers.values(), now, this.timeLimits),
      launchViews(this.launches.values()),
    );
    if (plan.length === 0) {
      this.signals.retriesChanged();
      return;
    }
    const touched = new Set<LiveWorker>();
    this.store.transaction(() => {
      for (const a of inRuns(plan)) {
        const l = this.launches.get(a.launch)!;
        const w = this.workers.get(a.worker)!;
        let t = l.ready.shift();
        while (t && !this.store.assign(l, t, w.id)) t = l.ready.shift();
        if (!t) continue;
        w.held.set(taskKey(l.id, t.task), {
          launch: l.id,
          task: t.task,
          attempt: t.attempt,
          demand: l.demand,
          started: false,
        });
        l.inFlight++;
        const msg: TaskAssignment = { launch: l.id, task: t.task, attempt: t.attempt, command: t.command };
        if (l.numJobs !== null) {
          msg.env = { DROVER_JOB_RANK: String(t.task - 1), DROVER_NUM_JOBS: String(l.numJobs) };
        }
        // After a requeue the task resumes from what it saved (as the runner tells its own requeues).
        if (l.settings.requeue && t.attempt > 1 && this.store.requeues(l, t.task) > 0)
          msg.env = { ...msg.env, DROVER_RESUME: '1' };
        if (!w.sentSettings.has(l.id)) {
          msg.settings = l.settings;
          w.sentSettings.add(l.id);
        }
        w.outTasks.push(msg);
        touched.add(w);
      }
    });
    for (const w of touched) this.signals.wake(w);
    this.signals.dispatchSoon(); // more may fit now that buffers were refilled
  }

  /** When the earliest retry waiting is due (unix s), or undefined when none waits. */
  nextRetryAt(): number | undefined {
    let next = Number.POSITIVE_INFINITY;
    for (const l of this.launches.values())
      for (const r of l.retryWaiting.values()) next = Math.min(next, r.notBefore);
    return Number.isFinite(next) ? next : undefined;
  }

  // ------------------------------------------------------------------------------------------ polls

  /** A worker asks for work: it is seen, and a worker done with its setup is ready. */
  polled(w: LiveWorker): void {
    w.lastSeen = this.clock.now();
    if (w.state === 'setup') {
      w.state = 'ready';
      this.store.setWorkerState(w.id, 'ready');
    }
  }

  /** A worker's heartbeat: it is seen; the answer says whether it should drain or stop. */
  heartbeat(w: LiveWorker): { stop?: 'drain' | 'stop' } {
    w.lastSeen = this.clock.now();
    return w.stop ? { stop: w.stop } : {};
  }

  // ------------------------------------------------------------------------------------------ ends

  /**
   * An attempt ended (reported, or lost): retry it while retries remain, else the task is done in this launch.
   * Inside a transaction.
   */
  endTask(
    l: LiveLaunch,
    task: number,
    attempt: number,
    state: TerminalState,
    lostReason?: string,
    requeued = false,
  ): void {
    const pt = this.store.poolTask(l, task);
    if (!pt) return;
    if (lostReason !== undefined) this.store.markLost(l, task, lostReason);
    const tries = Math.max(pt.tries, lostReason !== undefined ? 1 : 0);
    // A requeue (its end record says so: worker-events.ts; or its worker was lost and requeues are left) goes
    // again at once; retries count only the rest.
    const most = l.settings.requeue ?? 0;
    const lostAgain = lostReason !== undefined && most > 0 && this.store.requeues(l, task) < most;
    if (lostAgain) this.store.markRequeued(l, task, attempt);
    const next =
      requeued || lostAgain
        ? { kind: 'retry' as const, notBefore: this.clock.now() }
        : state === 'cancelled'
          ? { kind: 'done' as const }
          : afterAttempt(
              state,
              tries - (l.settings.requeue ? this.store.requeues(l, task) : 0),
              l.retries,
              l.retryDelay,
              this.clock.now(),
              () => this.clock.random(),
            );
    if (next.kind === 'retry') {
      if (requeued) this.store.requeueQueued(l, task, attempt + 1);
      else this.store.requeue(l, task, attempt + 1, next.notBefore);
      l.retryWaiting.set(task, { attempt: attempt + 1, tries, notBefore: next.notBefore });
      this.signals.retriesChanged();
    } else {
      this.store.finish(l, task);
      l.remaining--;
    }
  }

  /** A task handed out and never started goes back to waiting, as the same attempt. Inside a transaction. */
  requeueUnstarted(l: LiveLaunch, task: number): void {
    const pt = this.store.poolTask(l, task);
    if (!pt) return;
    this.store.unassign(l, task);
    l.retryWaiting.set(task, { attempt: pt.attempt, tries: pt.tries, notBefore: 0 });
  }

  /**
   * A task handed to a worker that was lost before it reported starting it: the worker may have started it
   * (killed between the two), so that attempt is recorded `lost` and the task goes again as the next attempt,
   * at once (it may never have run, so no retry policy is asked). A worker that leaves (`stopped`) says what it
   * ran before it goes: what it never reported it never started (requeueUnstarted).
   */
  loseUnreported(l: LiveLaunch, w: LiveWorker, task: number, attempt: number, why: string): void {
    const pt = this.store.poolTask(l, task);
    if (!pt) return;
    const lost = {
      task,
      attempt,
      host: w.host,
      at: this.clock.now(),
      reason: `${why} before it reported the start`,
    };
    if (this.store.loseUnreported(l, lost))
      l.retryWaiting.set(task, { attempt: attempt + 1, tries: pt.tries, notBefore: 0 });
    else this.requeueUnstarted(l, task);
  }

  /** After a launch changed: close it when nothing is left, and tell its followers. */
  afterChange(l: LiveLaunch): void {
    if (l.remaining <= 0 && l.expanded) {
      const closed = this.store.transaction(() => this.store.closeIfDone(l));
      if (closed) {
        this.launches.delete(l.id);
        this.log.info({ event: 'launch-done', launch: l.id, job: l.job });
      }
    }
    this.bump(l);
  }

  // ------------------------------------------------------------------------------------------ workers

  /**
   * A worker is lost (silent) or stopped: its started attempts are lost, the others go back to the queue. It
   * leaves memory (its row stays): if it comes back, it registers again with its id and secret.
   */
  loseWorker(w: LiveWorker, reason: string, state: 'lost' | 'stopped' = 'lost'): void {
    w.state = state;
    const changed = new Set<LiveLaunch>();
    this.store.transaction(() => {
      this.store.setWorkerState(w.id, state, reason);
      for (const h of w.held.values()) {
        const l = this.launches.get(h.launch);
        if (!l) continue;
        l.inFlight--;
        changed.add(l);
        const started = h.started || this.store.started(l, h.task, h.attempt);
        const why = `worker ${w.id} on ${w.host} ${reason}`;
        if (started) this.endTask(l, h.task, h.attempt, 'lost', why);
        else if (state === 'lost') this.loseUnreported(l, w, h.task, h.attempt, why);
        else this.requeueUnstarted(l, h.task);
      }
    });
    w.held.clear();
    this.signals.wake(w, true);
    if (this.workers.get(w.id) === w) this.workers.delete(w.id);
    this.log.warn({ event: `worker-${state}`, worker: w.id, pool: w.pool, reason });
    for (const l of changed) this.afterChange(l);
    this.signals.dispatchSoon();
  }

  /** A worker leaves (drained, stopped, or its setup failed). */
  leave(id: string, reason: string): void {
    const w = this.workers.get(id);
    if (w) this.loseWorker(w, reason, 'stopped');
  }

  // ------------------------------------------------------------------------------------------ cancels

  /** Act on cancel requests left in the store (by the CLI, or by the cancel route). */
  processCancels(): void {
    for (const r of this.store.pendingCancels()) {
      const wanted = r.tasks === 'all' ? undefined : new Set(r.tasks);
      this.store.transaction(() => this.store.cancelDone(r.id));
      const l = this.launches.get(r.launch);
      if (!l) continue;
      for (const w of this.workers.values()) {
        for (const h of w.held.values()) {
          if (h.launch === l.id && (!wanted || wanted.has(h.task)))
            w.outCancel.push({ launch: l.id, task: h.task });
        }
        this.signals.wake(w);
      }
      this.reloadQueue(l);
      this.afterChange(l);
    }
  }

  /** The periodic check: silent workers are lost, cancel requests acted on, due retries dispatched. */
  tick(): void {
    const now = this.clock.now();
    const views = [...this.workers.values()].map((w) => ({
      id: w.id,
      lastSeen: w.lastSeen,
      alive: w.state !== 'lost' && w.state !== 'stopped',
    }));
    for (const id of silentWorkers(views, now, this.opts.lostAfter)) {
      this.loseWorker(this.workers.get(id)!, `sent nothing for ${this.opts.lostAfter} s`);
    }
    this.processCancels();
    for (const l of this.launches.values()) {
      for (const r of l.retryWaiting.values()) {
        if (r.notBefore <= now) {
          this.signals.dispatchSoon();
          return;
        }
      }
    }
  }
}
