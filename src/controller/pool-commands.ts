import type { ControllerCore } from './core.js';

/** What scaling a pool down and taking it down ask of its live workers, over the core's state. */

/** Ask workers to drain: finish what they hold, take nothing new, then leave. */
export function drainWorkers(c: ControllerCore, ids: readonly string[]): void {
  c.store.transaction(() => {
    for (const id of ids) {
      const w = c.workers.get(id);
      if (!w) continue;
      w.stop = 'drain';
      w.state = 'draining';
      c.store.setWorkerState(w.id, 'draining');
    }
  });
  for (const id of ids) {
    const w = c.workers.get(id);
    if (w) c.signals.wake(w);
  }
  c.signals.dispatchSoon();
}

/** Ask a pool's live workers to stop now. */
export function stopPoolWorkers(c: ControllerCore, pool: string): void {
  for (const w of c.workers.values()) {
    if (w.pool !== pool || w.state === 'lost' || w.state === 'stopped') continue;
    w.stop = 'stop';
    c.signals.dispatchSoon();
  }
  for (const w of c.workers.values()) if (w.pool === pool) c.signals.wake(w);
}
