import { type LaunchView, prefetchPerSlot, slotShaped, type WorkerView } from './dispatch.js';
import type { LiveLaunch, LiveWorker } from './live.js';

/**
 * The dispatcher's view of the live workers: capacity, what they hold, whether they take tasks, and the time they
 * have left at `now` under their pool's time limit (`limits`, seconds, counted from their first registration).
 */
export function workerViews(
  workers: Iterable<LiveWorker>,
  now = 0,
  limits: ReadonlyMap<string, number> = new Map(),
): WorkerView[] {
  const out: WorkerView[] = [];
  for (const w of workers) {
    const used = { cpus: 0, gpus: 0, mem_mb: 0 };
    let shaped = true;
    for (const h of w.held.values()) {
      used.cpus += h.demand.cpus;
      used.gpus += h.demand.gpus;
      used.mem_mb += h.demand.mem_mb;
      shaped = shaped && slotShaped(w, h.demand);
    }
    out.push({
      id: w.id,
      pool: w.pool,
      accepting: w.state === 'ready' && w.stop === undefined && w.registered,
      slots: w.slots,
      capacity: w.capacity,
      used,
      count: w.held.size,
      slotShapedOnly: shaped,
    });
    const limit = limits.get(w.pool);
    if (limit !== undefined) out[out.length - 1]!.timeLeft = w.registeredAt + limit - now;
  }
  return out;
}

/** The dispatcher's view of the launches: demand, ready tasks, tasks in flight, prefetch depth. */
export function launchViews(launches: Iterable<LiveLaunch>): LaunchView[] {
  return [...launches].map((l) => ({
    id: l.id,
    pool: l.pool,
    demand: l.demand,
    ready: l.ready.length,
    inFlight: l.inFlight,
    prefetch: prefetchPerSlot(l.avgSeconds),
    ...(l.settings.taskTimeout !== undefined ? { timeNeeded: l.settings.taskTimeout } : {}),
  }));
}
