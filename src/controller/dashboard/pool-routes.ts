import type { FastifyInstance } from 'fastify';
import type { Ledger } from '../../ledger/ledger.js';
import { goneWorkers, liveWorkerRows } from '../../ledger/pool-workers.js';
import { findPool, listPoolRows } from '../../ledger/pools.js';
import type { LedgerPool, PoolsAnswer } from '../../protocol/dashboard.js';
import { poolStatus } from '../pool-status.js';
import { type DashboardContext, UI, user } from './context.js';

/** Register the pools page's read: each pool live from the controller, or as the ledger last knew it. */
export function poolRoutes(app: FastifyInstance, d: DashboardContext): void {
  app.get(`${UI}/pools`, { config: user }, async (): Promise<PoolsAnswer> => {
    const ledger = d.ledger();
    const ctx = d.pools?.();
    const rows = listPoolRows(ledger);
    return {
      controller: ctx !== undefined,
      pools: rows.map((p) => {
        if (ctx && p.state === 'up') {
          const s = poolStatus(ctx, p.name, true);
          return { ...s, live: true };
        }
        return ledgerPool(ledger, p);
      }),
    };
  });
}

/** No controller here (drover ui), or the pool is down: what the ledger last knew of its workers. */
function ledgerPool(
  ledger: Ledger,
  p: { name: string; backend: string; state: string; workers: number },
): LedgerPool {
  const live = liveWorkerRows(ledger).filter((w) => w.pool === p.name);
  const created = findPool(ledger, p.name)?.created_at ?? 0;
  const gone = goneWorkers(ledger, p.name, created);
  return {
    name: p.name,
    backend: p.backend,
    state: p.state,
    workers_wanted: p.workers,
    live: false,
    workers: [
      ...live.map((w) => ({
        id: w.id,
        host: w.host,
        pid: w.pid,
        state: w.state,
        slots: w.slots,
        free_slots: null,
        tasks: [],
        seen_ago: Date.now() / 1000 - w.last_seen,
        reason: null,
      })),
      ...gone.map((w) => ({
        id: w.id,
        host: w.host,
        pid: w.pid,
        state: w.state,
        slots: w.slots,
        free_slots: 0,
        tasks: [],
        seen_ago: Date.now() / 1000 - w.last_seen,
        reason: w.reason,
      })),
    ],
    workers_gone: gone.length,
    gone_reasons: [...new Set(gone.map((g) => g.reason).filter((r) => r !== null))].slice(0, 5),
    queued: null,
    running: null,
  };
}
