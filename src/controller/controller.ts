import { expandLaunch, getPoolLaunch, type PoolLaunchRow } from '../backends/pool/expand.js';
import type { Ledger } from '../ledger/ledger.js';
import type { TerminalState } from '../ledger/states.js';
import type {
  LaunchSettings,
  PollAnswer,
  RegisterRequest,
  ReportBatch,
  TaskAssignment,
} from '../protocol/messages.js';
import { planDispatch } from './dispatch.js';
import { type LiveLaunch, type LiveWorker, taskKey } from './live.js';
import { afterAttempt, silentWorkers } from './policy.js';
import {
  assignTask,
  attemptStarted,
  closePoolLaunchIfDone,
  finishTask,
  freshTasks,
  launchTaskState,
  markLost,
  poolTask,
  requeueForRetry,
  taskCommand,
  unassign,
} from './store.js';
import { launchViews, workerViews } from './views.js';
import { applyReport, type Registered, registerWorker } from './worker-events.js';
import { GONE, newWorker, type WorkerRow } from './worker-row.js';

/** Structured log of the controller (pino's interface). */
export interface Log {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** Timings of the controller. */
export interface ControllerOptions {
  /** Seconds between a worker's heartbeats. */
  heartbeat: number;
  /** Seconds of silence after which a worker is lost. */
  lostAfter: number;
  log: Log;
}

const BUFFER = 1000;
const EXPAND_CHUNK = 5000;

/**
 * The controller's event-driven core: launches with tasks left and live workers in memory, every change of
 * state written to the ledger in one transaction before anyone is told. Dispatch runs when something changed
 * (a launch, a report, a free slot, a due retry), never on a fixed interval; a 0.5 s tick only looks for
 * silent workers, due retries and cancel requests left in the database by the CLI.
 */
export class Controller {
  readonly workers = new Map<string, LiveWorker>();
  readonly launches = new Map<number, LiveLaunch>();
  private scheduled = false;
  private expanding = false;
  private tick: NodeJS.Timeout | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    readonly ledger: Ledger,
    readonly opts: ControllerOptions,
  ) {}

  /** Load what the database says is going on (after a restart: workers get `lostAfter` to reconnect). */
  start(): void {
    const now = Date.now() / 1000;
    const open = this.ledger
      .stmt(
        'SELECT pl.launch_id FROM pool_launches pl JOIN launches l ON l.id = pl.launch_id WHERE l.open = 1',
      )
      .all() as { launch_id: number }[];
    for (const { launch_id } of open) this.loadLaunch(launch_id);
    const rows = this.ledger
      .stmt("SELECT * FROM pool_workers WHERE state IN ('setup', 'ready', 'draining')")
      .all() as WorkerRow[];
    for (const r of rows) {
      const w = newWorker(r, now);
      this.workers.set(w.id, w);
    }
    const held = this.ledger.stmt('SELECT * FROM pool_tasks WHERE worker IS NOT NULL').all() as {
      launch_id: number;
      task_id: number;
      attempt: number;
      worker: string;
    }[];
    for (const h of held) {
      const l = this.launches.get(h.launch_id);
      if (!l) continue;
      let w = this.workers.get(h.worker);
      if (!w) {
        // Held by a worker already gone: it is requeued below as a lost worker's task.
        w = newWorker({ ...GONE, id: h.worker, pool: l.pool }, 0);
        this.workers.set(w.id, w);
      }
      const started = attemptStarted(this.ledger, l.jobId, h.task_id, h.attempt);
      w.held.set(taskKey(l.id, h.task_id), {
        launch: l.id,
        task: h.task_id,
        attempt: h.attempt,
        demand: l.demand,
        started,
      });
      l.inFlight++;
    }
    for (const w of this.workers.values())
      if (w.lastSeen === 0) this.loseWorker(w, 'gone before the restart');
    this.tick = setInterval(() => this.guard('tick', () => this.onTick()), 500);
    this.expandSoon();
    this.processCancels();
    this.schedule();
  }

  /** Stop timers and answer parked polls (graceful shutdown: workers reconnect to the next controller). */
  stop(): void {
    this.stopped = true;
    if (this.tick) clearInterval(this.tick);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    for (const w of this.workers.values()) this.answerPoll(w, true);
    for (const l of this.launches.values()) for (const f of l.waiters) f();
  }

  // ------------------------------------------------------------------------------------------ launches

  /** Take a launch just created (or found open at start) into memory and start making its task rows. */
  loadLaunch(id: number): LiveLaunch | undefined {
    const pl = getPoolLaunch(this.ledger, id);
    if (!pl) return undefined;
    const job = this.ledger
      .stmt('SELECT j.id, j.name FROM launches l JOIN jobs j ON j.id = l.job_id WHERE l.id = ?')
      .get(id) as { id: number; name: string };
    const l: LiveLaunch = {
      id,
      jobId: job.id,
      job: job.name,
      pool: pl.pool,
      demand: { cpus: pl.cpus, gpus: pl.gpus, mem_mb: pl.mem_mb },
      retries: pl.retries,
      retryDelay: pl.retry_delay,
      numJobs: pl.num_jobs,
      settings: JSON.parse(pl.settings) as LaunchSettings,
      total: pl.total,
      remaining: 0,
      ready: [],
      scanFrom: pl.cursor,
      freshDone: false,
      expanded: false,
      retryWaiting: new Map(),
      inFlight: 0,
      avgSeconds: undefined,
      version: 0,
      waiters: new Set(),
    };
    this.launches.set(id, l);
    this.reloadQueue(l, pl);
    this.expandSoon();
    this.schedule();
    return l;
  }

  /** Re-read a launch's queue from the database (after a cancel changed it behind our back). */
  private reloadQueue(l: LiveLaunch, pl: PoolLaunchRow = getPoolLaunch(this.ledger, l.id)!): void {
    const made = this.ledger.stmt('SELECT count(*) AS n FROM launch_tasks WHERE launch_id = ?').get(l.id) as {
      n: number;
    };
    const left = this.ledger
      .stmt("SELECT count(*) AS n FROM launch_tasks WHERE launch_id = ? AND state IN ('queued', 'running')")
      .get(l.id) as { n: number };
    l.expanded = made.n >= pl.total;
    l.remaining = left.n + (pl.total - made.n);
    l.ready = [];
    l.scanFrom = pl.cursor;
    l.freshDone = false;
    l.retryWaiting.clear();
    const waiting = this.ledger
      .stmt(
        'SELECT task_id, attempt, tries, not_before FROM pool_tasks WHERE launch_id = ? AND worker IS NULL',
      )
      .all(l.id) as { task_id: number; attempt: number; tries: number; not_before: number }[];
    for (const r of waiting) {
      l.retryWaiting.set(r.task_id, { attempt: r.attempt, tries: r.tries, notBefore: r.not_before });
    }
    this.bump(l);
  }

  /** Make task rows of launches not fully expanded, a chunk at a time, without holding up requests. */
  private expandSoon(): void {
    if (this.expanding || this.stopped) return;
    const l = [...this.launches.values()].find((x) => !x.expanded);
    if (!l) return;
    this.expanding = true;
    setImmediate(() =>
      this.guard('expand', () => {
        this.expanding = false;
        if (this.stopped || !this.launches.has(l.id)) return this.expandSoon();
        const n = this.ledger.write(() => expandLaunch(this.ledger, l.id, EXPAND_CHUNK));
        if (n < EXPAND_CHUNK) l.expanded = true;
        if (n > 0) {
          l.freshDone = false;
          this.schedule();
        }
        this.expandSoon();
      }),
    );
  }

  /** Run background work; an error is logged, never the end of the server. */
  private guard(what: string, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.opts.log.error({ event: 'internal-error', what, err: String((err as Error).stack ?? err) });
    }
  }

  private bump(l: LiveLaunch): void {
    l.version++;
    for (const f of l.waiters) f();
    l.waiters.clear();
  }

  /** Resolve when launch `id` changes after `version`, or after `waitMs`. */
  waitForChange(id: number, version: number, waitMs: number): Promise<void> {
    const l = this.launches.get(id);
    if (!l || l.version !== version) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        l.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, waitMs);
      l.waiters.add(done);
    });
  }

  // ------------------------------------------------------------------------------------------ dispatch

  /** Run dispatch soon (coalesced: many events, one pass). */
  schedule(): void {
    if (this.scheduled || this.stopped) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.guard('dispatch', () => this.dispatch());
    });
  }

  private dispatch(): void {
    const now = Date.now() / 1000;
    for (const l of this.launches.values()) {
      for (const [task, r] of l.retryWaiting) {
        if (r.notBefore > now) continue;
        l.retryWaiting.delete(task);
        l.ready.unshift({
          task,
          attempt: r.attempt,
          tries: r.tries,
          command: r.command ?? taskCommand(this.ledger, l.jobId, task),
        });
      }
      if (l.ready.length < BUFFER / 4 && !l.freshDone) {
        const more = freshTasks(this.ledger, l.jobId, l.id, l.scanFrom, BUFFER);
        if (more.length > 0) l.scanFrom = more[more.length - 1]!.task;
        if (more.length < BUFFER && l.expanded) l.freshDone = true;
        l.ready.push(...more);
      }
    }
    const plan = planDispatch(workerViews(this.workers.values()), launchViews(this.launches.values()));
    if (plan.length === 0) {
      this.armRetryTimer();
      return;
    }
    const touched = new Set<LiveWorker>();
    this.ledger.write(() => {
      for (const a of plan) {
        const l = this.launches.get(a.launch)!;
        const w = this.workers.get(a.worker)!;
        let t = l.ready.shift();
        while (t && launchTaskState(this.ledger, l.id, t.task) !== 'queued') t = l.ready.shift();
        if (!t) continue;
        assignTask(this.ledger, l.id, t, w.id);
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
        if (!w.sentSettings.has(l.id)) {
          msg.settings = l.settings;
          w.sentSettings.add(l.id);
        }
        w.outTasks.push(msg);
        touched.add(w);
      }
    });
    for (const w of touched) this.answerPoll(w);
    this.schedule(); // more may fit now that buffers were refilled
  }

  private armRetryTimer(): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    let next = Number.POSITIVE_INFINITY;
    for (const l of this.launches.values())
      for (const r of l.retryWaiting.values()) next = Math.min(next, r.notBefore);
    if (!Number.isFinite(next)) return;
    const ms = Math.max(0, next * 1000 - Date.now()) + 5;
    this.retryTimer = setTimeout(() => this.schedule(), ms);
    this.retryTimer.unref();
  }

  // ------------------------------------------------------------------------------------------ workers

  /** A worker registers (first time, or again with its id and secret after the controller or network was away). */
  register(req: RegisterRequest): Registered {
    return registerWorker(this, req);
  }

  /** Apply a worker's report: batches after the last applied sequence number, in one transaction. */
  report(w: LiveWorker, batches: ReportBatch[]): { seq: number } {
    return applyReport(this, w, batches);
  }

  /** A worker asks for work; the answer comes when there is some (or after `waitMs`). */
  poll(w: LiveWorker, waitMs: number): Promise<PollAnswer> {
    w.lastSeen = Date.now() / 1000;
    if (w.state === 'setup') {
      w.state = 'ready';
      this.ledger.stmt("UPDATE pool_workers SET state = 'ready' WHERE id = ?").run(w.id);
    }
    this.answerPoll(w, true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.answerPoll(w, true), waitMs);
      w.poll = { answer: resolve, timer };
      if (w.outTasks.length > 0 || w.outCancel.length > 0 || w.stop) this.answerPoll(w);
      else this.schedule();
    });
  }

  /** Answer a worker's parked poll with what waits for it (with `force`, even with nothing). */
  private answerPoll(w: LiveWorker, force = false): void {
    if (!w.poll) return;
    if (!force && w.outTasks.length === 0 && w.outCancel.length === 0 && !w.stop) return;
    const { answer, timer } = w.poll;
    w.poll = undefined;
    clearTimeout(timer);
    const a: PollAnswer = { tasks: w.outTasks, cancel: w.outCancel };
    if (w.stop) a.stop = w.stop;
    w.outTasks = [];
    w.outCancel = [];
    answer(a);
  }

  /** Answer a worker's parked poll now if something waits for it (a stop, a cancel). */
  poke(w: LiveWorker): void {
    this.answerPoll(w);
  }

  /** A worker's heartbeat. */
  heartbeat(w: LiveWorker): { stop?: 'drain' | 'stop' } {
    w.lastSeen = Date.now() / 1000;
    return w.stop ? { stop: w.stop } : {};
  }

  /** A worker leaves (drained, stopped, or its setup failed). */
  leave(id: string, reason: string): void {
    const w = this.workers.get(id);
    if (!w) return;
    this.loseWorker(w, reason, 'stopped');
  }

  /**
   * An attempt ended (reported, or lost): retry it while retries remain, else the task is done in this launch.
   * Inside a write transaction.
   */
  /** @internal (worker-events.ts) */
  endTask(l: LiveLaunch, task: number, attempt: number, state: TerminalState, lostReason?: string): void {
    const pt = poolTask(this.ledger, l.id, task);
    if (!pt) return;
    if (lostReason !== undefined) markLost(this.ledger, l.jobId, l.id, task, lostReason);
    const tries = Math.max(pt.tries, lostReason !== undefined ? 1 : 0);
    const next =
      state === 'cancelled'
        ? { kind: 'done' as const }
        : afterAttempt(state, tries, l.retries, l.retryDelay, Date.now() / 1000);
    if (next.kind === 'retry') {
      requeueForRetry(this.ledger, l.jobId, l.id, task, attempt + 1, next.notBefore);
      l.retryWaiting.set(task, { attempt: attempt + 1, tries, notBefore: next.notBefore });
      this.armRetryTimer();
    } else {
      finishTask(this.ledger, l.id, task);
      l.remaining--;
    }
  }

  /** @internal (worker-events.ts) */
  requeueUnstarted(l: LiveLaunch, task: number): void {
    const pt = poolTask(this.ledger, l.id, task);
    if (!pt) return;
    unassign(this.ledger, l.id, task);
    l.retryWaiting.set(task, { attempt: pt.attempt, tries: pt.tries, notBefore: 0 });
  }

  /** @internal (worker-events.ts) */
  afterChange(l: LiveLaunch): void {
    if (l.remaining <= 0 && l.expanded) {
      const closed = this.ledger.write(() => closePoolLaunchIfDone(this.ledger, l.id));
      if (closed) {
        this.launches.delete(l.id);
        this.opts.log.info({ event: 'launch-done', launch: l.id, job: l.job });
      }
    }
    this.bump(l);
  }

  /**
   * A worker is lost (silent) or stopped: its started attempts are lost, the others go back to the queue. It
   * leaves memory (its row stays): if it comes back, it registers again with its id and secret.
   */
  loseWorker(w: LiveWorker, reason: string, state: 'lost' | 'stopped' = 'lost'): void {
    w.state = state;
    const changed = new Set<LiveLaunch>();
    this.ledger.write(() => {
      this.ledger.stmt('UPDATE pool_workers SET state = ?, reason = ? WHERE id = ?').run(state, reason, w.id);
      for (const h of w.held.values()) {
        const l = this.launches.get(h.launch);
        if (!l) continue;
        l.inFlight--;
        changed.add(l);
        const started = h.started || attemptStarted(this.ledger, l.jobId, h.task, h.attempt);
        if (started) this.endTask(l, h.task, h.attempt, 'lost', `worker ${w.id} on ${w.host} ${reason}`);
        else this.requeueUnstarted(l, h.task);
      }
    });
    w.held.clear();
    this.answerPoll(w, true);
    if (this.workers.get(w.id) === w) this.workers.delete(w.id);
    this.opts.log.warn({ event: `worker-${state}`, worker: w.id, pool: w.pool, reason });
    for (const l of changed) this.afterChange(l);
    this.schedule();
  }

  // ------------------------------------------------------------------------------------------ cancels

  /** Act on cancel requests left in the database (by the CLI, or by the cancel route). */
  processCancels(): void {
    const rows = this.ledger.stmt('SELECT * FROM pool_cancels WHERE done = 0 ORDER BY id').all() as {
      id: number;
      launch_id: number;
      tasks: string;
    }[];
    for (const r of rows) {
      const tasks = JSON.parse(r.tasks) as number[] | 'all';
      const wanted = tasks === 'all' ? undefined : new Set(tasks);
      this.ledger.write(() => {
        this.ledger.stmt('UPDATE pool_cancels SET done = 1 WHERE id = ?').run(r.id);
      });
      const l = this.launches.get(r.launch_id);
      if (!l) continue;
      for (const w of this.workers.values()) {
        for (const h of w.held.values()) {
          if (h.launch === l.id && (!wanted || wanted.has(h.task)))
            w.outCancel.push({ launch: l.id, task: h.task });
        }
        this.answerPoll(w);
      }
      this.reloadQueue(l);
      this.afterChange(l);
    }
  }

  private onTick(): void {
    const now = Date.now() / 1000;
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
          this.schedule();
          return;
        }
      }
    }
  }
}
