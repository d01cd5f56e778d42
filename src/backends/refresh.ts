import { ingestLaunch } from '../ledger/ingest.js';
import { type LaunchRow, openLaunches } from '../ledger/launches.js';
import type { Ledger } from '../ledger/ledger.js';
import { closeLaunchIfDone } from '../ledger/transitions.js';
import type { Backend } from './backend.js';
import { backendFor } from './registry.js';

/**
 * Bring the ledger up to date for a job (or every job): ingest what runners wrote, let each backend fill in
 * what runners could not say, and close launches that are done (a launch whose backend says a task's end can
 * still change stays open: a closed launch's record is final). Cheap when nothing is open. A ledger opened
 * for reading is brought up to date as far as the disk lets it (see Ledger.refreshing).
 */
export function refresh(ledger: Ledger, jobId?: number): void {
  const launches = openLaunches(ledger, jobId);
  if (launches.length === 0) return;
  ledger.refreshing(() => {
    for (const launch of launches) ingestLaunch(ledger, launch);
    // Each backend gets all its launches at once: one scheduler query for all of them (docs/slurm.md).
    const byBackend = new Map<Backend, LaunchRow[]>();
    for (const launch of launches) {
      const backend = backendFor(launch.backend);
      const list = byBackend.get(backend);
      if (list) list.push(launch);
      else byBackend.set(backend, [launch]);
    }
    ledger.write(() => {
      const keepOpen = new Set<number>();
      for (const [backend, list] of byBackend)
        for (const id of backend.reconcile(ledger, list)) keepOpen.add(id);
      for (const launch of launches) if (!keepOpen.has(launch.id)) closeLaunchIfDone(ledger, launch.id);
    });
  });
}
