import { stopWorkers, type WorkerHandle } from '../backends/pool/start.js';
import { type ElementState, elementStates } from '../backends/pool/starting.js';
import { type AllocationRow, setAllocationState } from '../ledger/pool-allocations.js';
import { poolWorkerElements } from '../ledger/pool-workers.js';
import type { PoolRow } from '../ledger/pools.js';
import { judgeAllocation } from './allocate.js';
import type { PoolContext } from './pool-row.js';

/** What became of a pool's allocations, from one look at its scheduler (automatic allocation's eyes). */

/** An allocation's array job, as a handle stopWorkers takes. */
export function allocationHandle(pool: PoolRow, a: AllocationRow): WorkerHandle {
  return { kind: pool.backend === 'gridengine' ? 'gridengine' : 'slurm', job: a.job!, count: a.workers };
}

/** Log a change of an allocation. */
export function logAllocation(ctx: PoolContext, event: string, pool: PoolRow, a: AllocationRow): void {
  ctx.controller.opts.log.info({ event, pool: pool.name, id: a.id, job: a.job, reason: a.reason });
}

/**
 * Judge the pool's open allocations (judgeAllocation) from one squeue / qstat and the workers that registered
 * since: write the changes, cancel what is left of a failed one. Returns the workers still on their way
 * (submitted, not registered, still in the scheduler) and the allocations waiting in its queue.
 */
export async function watchAllocations(
  ctx: PoolContext,
  pool: PoolRow,
  allocations: AllocationRow[],
): Promise<{ starting: number; waiting: AllocationRow[] }> {
  const open = allocations.filter((a) => a.job !== null && (a.state === 'queued' || a.state === 'running'));
  if (open.length === 0) return { starting: 0, waiting: [] };
  const kind = pool.backend === 'gridengine' ? 'gridengine' : 'slurm';
  const states = await elementStates(
    kind,
    open.map((a) => a.job!),
  );
  // Read after the scheduler's answer: a worker that registered meanwhile is seen, not taken for gone.
  const byElement = new Map<string, { state: string; reason: string | null }[]>();
  for (const w of poolWorkerElements(ctx.ledger, pool.name, pool.created_at)) {
    if (w.element === null) continue;
    byElement.set(w.element, [...(byElement.get(w.element) ?? []), w]);
  }
  const sep = kind === 'slurm' ? '_' : '.';
  const now = Date.now() / 1000;
  let starting = 0;
  const waiting: AllocationRow[] = [];
  for (const a of open) {
    const names = Array.from({ length: a.workers }, (_, i) => `${a.job}${sep}${i + 1}`);
    const elements: (ElementState | 'gone')[] | undefined =
      states && names.map((n) => states.get(n) ?? 'gone');
    const workers = names.flatMap((n) => byElement.get(n) ?? []);
    const j = judgeAllocation({ elements, workers });
    if (j.state !== a.state || j.reason !== a.reason) {
      setAllocationState(ctx.ledger, a.id, j.state, j.reason, now);
      Object.assign(a, { state: j.state, reason: j.reason });
      logAllocation(ctx, `allocation-${j.state}`, pool, a);
      if (j.state === 'failed') await stopWorkers([allocationHandle(pool, a)]);
    }
    if (j.state !== 'queued' && j.state !== 'running') continue;
    names.forEach((n, i) => {
      const e = elements?.[i];
      if (!byElement.has(n) && (e === undefined || e === 'waiting' || e === 'running')) starting++;
    });
    const inQueue = elements === undefined || elements.includes('waiting');
    if (j.state === 'queued' && workers.length === 0 && inQueue) waiting.push(a);
  }
  return { starting, waiting };
}
