import { type LaunchView, prefetchPerSlot, slotShaped, type WorkerView } from './dispatch.js';
import type { LiveLaunch, LiveWorker } from './live.js';

/** The dispatcher's view of the live workers: capacity, what they hold, whether they take tasks. */
export function workerViews(workers: Iterable<LiveWorker>): WorkerView[] {
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
  }));
}
