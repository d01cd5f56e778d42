import type { Ledger } from '../ledger/ledger.js';
import { poolAllocations } from '../ledger/pool-allocations.js';
import { goneWorkers } from '../ledger/pool-workers.js';
import { listPoolRows } from '../ledger/pools.js';
import type { AutoStatus, PoolStatus, WorkerStatus } from '../protocol/messages.js';
import type { AutoSettings } from './allocate.js';
import { getPool, type PoolContext, type PoolRow } from './pool-row.js';

/** Most gone workers' reasons a pool status names. */
const REASONS = 5;

/**
 * What `drover pool status` shows: the live workers (setup, ready, draining); with `all`, the lost and stopped
 * ones of this pool's incarnation too (newest first). Always: how many are gone, and the latest reasons why.
 */
export function poolStatus(ctx: PoolContext, name: string, all = false): PoolStatus {
  const p = getPool(ctx.ledger, name, false);
  const now = Date.now() / 1000;
  const round = (s: number) => Math.round(s * 10) / 10;
  const workers: WorkerStatus[] = [...ctx.controller.workers.values()]
    .filter((w) => w.pool === name && w.state !== 'lost' && w.state !== 'stopped')
    .map((w) => ({
      id: w.id,
      host: w.host,
      pid: w.pid,
      state: w.state,
      slots: w.slots,
      free_slots: Math.max(0, w.slots - w.held.size),
      tasks: [...w.held.keys()],
      seen_ago: round(now - w.lastSeen),
      reason: null,
    }));
  const gone = goneWorkers(ctx.ledger, name, p.created_at);
  if (all) {
    for (const g of gone) {
      workers.push({
        id: g.id,
        host: g.host,
        pid: g.pid,
        state: g.state,
        slots: g.slots,
        free_slots: 0,
        tasks: [],
        seen_ago: round(now - g.last_seen),
        reason: g.reason,
      });
    }
  }
  const reasons = [...new Set(gone.map((g) => g.reason).filter((r): r is string => r !== null))];
  // Running: started on a worker (as `list` says); a task handed to a worker that has not started it is queued.
  let queued = 0;
  let running = 0;
  for (const l of ctx.controller.launches.values()) {
    if (l.pool === name) queued += Math.max(0, l.remaining);
  }
  for (const w of ctx.controller.workers.values()) {
    if (w.pool !== name) continue;
    for (const h of w.held.values()) if (h.started) running++;
  }
  queued = Math.max(0, queued - running);
  return {
    name: p.name,
    backend: p.backend,
    state: p.state,
    workers_wanted: p.workers,
    per_worker: { cpus: p.cpus, gpus: p.gpus, mem_mb: p.mem_mb, slots: p.slots, duration: p.duration },
    setup: p.setup,
    workers,
    workers_gone: gone.length,
    gone_reasons: reasons.slice(0, REASONS),
    queued,
    running,
    handles: JSON.parse(p.handles) as unknown[],
    auto: autoStatus(ctx, p),
  };
}

/** Most allocations a pool status lists (the newest). */
const ALLOCATIONS = 20;

/** A pool's automatic allocation: its settings, state, last decision and newest allocations; null without --auto. */
function autoStatus(ctx: PoolContext, p: PoolRow): AutoStatus | null {
  if (p.auto === null) return null;
  const s = JSON.parse(p.auto) as AutoSettings;
  const d = ctx.auto?.decision(p.name);
  return {
    max_workers: s.maxWorkers,
    min_workers: s.minWorkers,
    idle_timeout: s.idleTimeout,
    backlog: s.backlog,
    state: d?.paused ? 'paused' : 'active',
    decision: p.state === 'down' ? 'the pool is down' : (d?.reason ?? 'not looked yet'),
    allocations: poolAllocations(ctx.ledger, p.name, p.created_at)
      .reverse()
      .slice(0, ALLOCATIONS)
      .map((a) => ({
        id: a.id,
        job: a.job,
        workers: a.workers,
        state: a.state,
        submitted_at: a.submitted_at,
        reason: a.reason,
      })),
  };
}

/** Live workers of a pool now (setup, ready or draining). */
export function liveWorkerCount(ctx: PoolContext, name: string): number {
  let n = 0;
  for (const w of ctx.controller.workers.values()) {
    if (w.pool === name && w.state !== 'lost' && w.state !== 'stopped') n++;
  }
  return n;
}

/** Every pool's name and state. */
export function listPools(
  ledger: Ledger,
): { name: string; backend: string; state: string; workers: number }[] {
  return listPoolRows(ledger);
}
