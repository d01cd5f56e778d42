import { ingestLaunch } from '../ledger/ingest.js';
import { closeLaunchIfDone, openLaunches } from '../ledger/launches.js';
import type { Ledger } from '../ledger/ledger.js';
import { backendFor } from './registry.js';

/**
 * Bring the ledger up to date for a job (or every job): ingest what runners wrote, let each backend fill in
 * what runners could not say, and close launches that are done. Cheap when nothing is open.
 */
export function refresh(ledger: Ledger, jobId?: number): void {
  for (const launch of openLaunches(ledger, jobId)) {
    ingestLaunch(ledger, launch);
    ledger.write(() => {
      backendFor(launch.backend).reconcile(ledger, launch);
      closeLaunchIfDone(ledger, launch.id);
    });
  }
}
