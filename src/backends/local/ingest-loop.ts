import { ingestLaunch } from '../../ledger/ingest.js';
import type { LaunchRow } from '../../ledger/launches.js';
import type { Ledger } from '../../ledger/ledger.js';
import { BUSY_TIMEOUT_MS } from '../../ledger/open.js';

/** How often a local launch's records are moved into the ledger while its tasks run. */
export const INGEST_EVERY_MS = 500;

/**
 * How long a round waits for a ledger another process is writing: the runner's event loop (which starts the
 * next task) waits with it, so a busy ledger makes the round skip rather than hold up the tasks.
 */
const ROUND_WAIT_MS = 100;

/**
 * Move a local launch's records into the ledger every INGEST_EVERY_MS while its tasks run, so that the ledger
 * stays current without anyone asking: a `drover status` during or after the launch finds at most the last
 * half-second's records left to ingest, not all of them. A foreground launch does it in the launching process;
 * a detached runner does it itself (it runs on the submit host beside the ledger — runners on compute nodes never
 * touch the database). A round the ledger refuses (busy, full disk) is skipped: the next one, or the next
 * `drover status`, ingests those records, as ingestion is idempotent. Returns what stops it.
 */
export function ingestWhileRunning(ledger: Ledger, launch: LaunchRow): () => void {
  const timer = setInterval(() => {
    try {
      ledger.setBusyTimeout(ROUND_WAIT_MS);
      try {
        ingestLaunch(ledger, launch);
      } finally {
        ledger.setBusyTimeout(BUSY_TIMEOUT_MS);
      }
    } catch {
      // The ledger is busy or refuses the write; a later ingest gets these records.
    }
  }, INGEST_EVERY_MS);
  return () => clearInterval(timer);
}
