import { startWorkers, stopWorkers } from '../backends/pool/start.js';
import { DroverError } from '../errors.js';
import { insertAllocation, poolAllocations, setAllocationState } from '../ledger/pool-allocations.js';
import { addPoolHandles, findPool, type PoolRow, upPools } from '../ledger/pools.js';
import {
  type AllocationOutcome,
  type AutoSettings,
  decideAllocation,
  failuresInRow,
  idleToLeave,
  toWithdraw,
} from './allocate.js';
import { allocationHandle, logAllocation, watchAllocations } from './allocation-watch.js';
import { drainWorkers } from './pool-commands.js';
import type { AutoScaling, PoolContext } from './pool-row.js';
import { inTurn, setTimeLimit, workerSpec } from './pools.js';

/**
 * The shell of automatic allocation (`pool create --auto`) around its pure decisions (allocate.ts): every second,
 * and soon after a launch or a create, for each pool that has it, in the pool's turn (after its create, scale and
 * down): ask the scheduler where the pool's allocations are (one squeue / qstat), judge each (queued, running,
 * finished, failed), decide, and submit one array of workers through the backend's own client (start.ts), drain
 * workers idle too long, withdraw allocations nobody needs. The decision's reason is kept for `pool status`.
 */

/** What the shell remembers of a pool between looks (for one incarnation of it). */
interface Memo {
  createdAt: number;
  reason: string;
  paused: boolean;
  /** Worker id → since when it has been ready and idle (unix s). */
  idleSince: Map<string, number>;
  /** Since when nothing has been queued (unix s). */
  queueEmptySince: number | undefined;
}

/** Seconds between looks at the pools. */
const PERIOD_MS = 1000;

export class Autoscaler implements AutoScaling {
  private readonly memos = new Map<string, Memo>();
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private again = false;
  private stopped = false;

  constructor(private readonly ctx: PoolContext) {}

  /** Learn every pool's worker time limit, then look at the pools every second. */
  start(): void {
    for (const p of upPools(this.ctx.ledger)) setTimeLimit(this.ctx, p);
    this.timer = setInterval(() => this.soon(), PERIOD_MS);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
  }

  soon(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    void this.pass().finally(() => {
      this.running = false;
      if (this.again) {
        this.again = false;
        setImmediate(() => this.soon());
      }
    });
  }

  resumed(pool: string): void {
    const m = this.memos.get(pool);
    if (m) Object.assign(m, { paused: false, reason: 'resumed: looking again' });
    this.soon();
  }

  decision(pool: string): { reason: string; paused: boolean } | undefined {
    const m = this.memos.get(pool);
    return m && { reason: m.reason, paused: m.paused };
  }

  private async pass(): Promise<void> {
    for (const p of upPools(this.ctx.ledger)) {
      if (p.auto === null || this.stopped) continue;
      try {
        await inTurn(p.name, () => this.look(p.name));
      } catch (err) {
        this.ctx.controller.opts.log.error({ event: 'autoscale-error', pool: p.name, err: String(err) });
      }
    }
  }

  private memo(p: PoolRow): Memo {
    let m = this.memos.get(p.name);
    if (!m || m.createdAt !== p.created_at) {
      m = {
        createdAt: p.created_at,
        reason: 'not looked yet',
        paused: false,
        idleSince: new Map(),
        queueEmptySince: undefined,
      };
      this.memos.set(p.name, m);
    }
    return m;
  }

  /** One look at one pool. */
  private async look(name: string): Promise<void> {
    const pool = findPool(this.ctx.ledger, name);
    if (pool?.state !== 'up' || pool.auto === null || this.stopped) return;
    const s = JSON.parse(pool.auto) as AutoSettings;
    const m = this.memo(pool);
    const allocations = poolAllocations(this.ctx.ledger, name, pool.created_at);
    const seen = await watchAllocations(this.ctx, pool, allocations);
    const now = Date.now() / 1000;
    const demand = this.demand(pool);
    const outcomes: AllocationOutcome[] = allocations
      .filter((a) => a.counted === 1)
      .map((a) => (a.state === 'failed' ? 'failed' : a.state === 'queued' ? 'waiting' : 'started'));
    const lastFailure = allocations.filter((a) => a.counted === 1 && a.state === 'failed').at(-1)?.reason;
    const d = decideAllocation(s, {
      ...demand,
      starting: seen.starting,
      waitingAllocations: seen.waiting.length,
      failuresInRow: failuresInRow(outcomes),
      ...(lastFailure ? { lastFailure } : {}),
    });
    m.reason = d.reason;
    m.paused = d.kind === 'paused';
    if (d.kind === 'submit') await this.submit(pool, d.workers, d.reason);
    this.releaseIdle(pool, s, m, now);
    m.queueEmptySince = demand.queued === 0 ? (m.queueEmptySince ?? now) : undefined;
    const withdraw = new Set(
      toWithdraw(
        seen.waiting.map((a) => String(a.id)),
        m.queueEmptySince,
        now,
        s.idleTimeout,
      ),
    );
    for (const a of seen.waiting.filter((x) => withdraw.has(String(x.id)))) {
      await stopWorkers([allocationHandle(pool, a)]);
      setAllocationState(
        this.ctx.ledger,
        a.id,
        'finished',
        `withdrawn: nothing queued for ${s.idleTimeout} s`,
        now,
      );
      logAllocation(this.ctx, 'allocation-withdrawn', pool, a);
    }
  }

  /** The pool's queued tasks, its ready workers' free slots, what one new worker takes, its live workers. */
  private demand(pool: PoolRow) {
    const c = this.ctx.controller;
    let remaining = 0;
    let perWorker = pool.slots;
    for (const l of c.launches.values()) {
      if (l.pool !== pool.name || l.remaining <= 0) continue;
      remaining += l.remaining;
      const d = l.demand;
      const fit = Math.min(
        Math.floor(pool.cpus / Math.max(1, d.cpus)),
        d.gpus > 0 ? Math.floor(pool.gpus / d.gpus) : pool.slots,
        d.mem_mb > 0 && pool.mem_mb > 0 ? Math.floor(pool.mem_mb / d.mem_mb) : pool.slots,
      );
      perWorker = Math.min(perWorker, Math.max(1, fit));
    }
    let held = 0;
    let freeSlots = 0;
    let live = 0;
    let inSetup = 0;
    for (const w of c.workers.values()) {
      if (w.pool !== pool.name || w.state === 'lost' || w.state === 'stopped') continue;
      live++;
      held += w.held.size;
      if (w.state === 'setup') inSetup++;
      if (w.state === 'ready' && w.stop === undefined) freeSlots += Math.max(0, w.slots - w.held.size);
    }
    return { queued: Math.max(0, remaining - held), freeSlots, perWorker, live, inSetup };
  }

  /** Submit one allocation of `workers` workers; a refusal is recorded as a failed allocation with its reason. */
  private async submit(pool: PoolRow, workers: number, why: string): Promise<void> {
    const now = Date.now() / 1000;
    try {
      const handles = await startWorkers(workerSpec(this.ctx, pool), workers);
      addPoolHandles(this.ctx.ledger, pool.name, handles);
      for (const h of handles) {
        if (h.kind === 'local') continue;
        const id = insertAllocation(this.ctx.ledger, {
          pool: pool.name,
          job: h.job,
          workers: h.count,
          submitted_at: now,
          state: 'queued',
          reason: null,
        });
        this.ctx.controller.opts.log.info({
          event: 'allocation',
          pool: pool.name,
          id,
          job: h.job,
          workers: h.count,
          why,
        });
      }
    } catch (err) {
      const reason = err instanceof DroverError ? err.message : String(err);
      insertAllocation(this.ctx.ledger, {
        pool: pool.name,
        job: null,
        workers,
        submitted_at: now,
        state: 'failed',
        reason,
      });
      this.ctx.controller.opts.log.warn({ event: 'allocation-refused', pool: pool.name, workers, reason });
    }
  }

  /** Drain the pool's workers idle past its idle timeout (keeping its --min-workers). */
  private releaseIdle(pool: PoolRow, s: AutoSettings, m: Memo, now: number): void {
    const views = [];
    let live = 0;
    const seen = new Set<string>();
    for (const w of this.ctx.controller.workers.values()) {
      if (w.pool !== pool.name || w.state !== 'ready' || w.stop !== undefined) continue;
      live++;
      seen.add(w.id);
      if (w.held.size > 0) m.idleSince.delete(w.id);
      else if (!m.idleSince.has(w.id)) m.idleSince.set(w.id, now);
      views.push({ id: w.id, idleSince: m.idleSince.get(w.id), registeredAt: w.registeredAt });
    }
    for (const id of m.idleSince.keys()) if (!seen.has(id)) m.idleSince.delete(id);
    const leave = idleToLeave(views, now, s, live);
    if (leave.length === 0) return;
    drainWorkers(this.ctx.controller.core, leave);
    this.ctx.controller.opts.log.info({ event: 'workers-idle', pool: pool.name, workers: leave });
  }
}
