import type { ControllerCore } from './core.js';
import { taskKey } from './live.js';
import { GONE, newWorker } from './worker-row.js';

/**
 * Load what the store says is going on into the core: open launches, live workers and what they hold. After a
 * restart, workers get `lostAfter` to reconnect; a task held by a worker already gone is requeued at once. Then
 * act on cancel requests left meanwhile.
 */
export function loadState(c: ControllerCore): void {
  const now = c.clock.now();
  for (const id of c.store.openLaunches()) c.loadLaunch(id);
  for (const r of c.store.liveWorkers()) {
    const w = newWorker(r, now);
    c.workers.set(w.id, w);
  }
  for (const h of c.store.held()) {
    const l = c.launches.get(h.launch);
    if (!l) continue;
    let w = c.workers.get(h.worker);
    if (!w) {
      // Held by a worker already gone: it is requeued below as a lost worker's task.
      w = newWorker({ ...GONE, id: h.worker, pool: l.pool }, 0);
      c.workers.set(w.id, w);
    }
    w.held.set(taskKey(l.id, h.task), {
      launch: l.id,
      task: h.task,
      attempt: h.attempt,
      demand: l.demand,
      started: c.store.started(l, h.task, h.attempt),
    });
    l.inFlight++;
  }
  for (const w of c.workers.values()) if (w.lastSeen === 0) c.loseWorker(w, 'gone before the restart');
  c.signals.expandSoon();
  c.processCancels();
  c.signals.dispatchSoon();
}
