import fs from 'node:fs';
import type { LaunchRow } from '../ledger/launches.js';
import type { Ledger } from '../ledger/ledger.js';
import { deleteLaunch } from '../ledger/transitions.js';

/**
 * A launch whose backend failed before any of its tasks started did not happen: it leaves the ledger and its
 * folder goes (a refused submission, a runner's files a full disk refused). When the ledger refuses even that,
 * the error that brought us here is the one to report.
 */
export function takeBack(ledger: Ledger, launch: LaunchRow): void {
  try {
    deleteLaunch(ledger, launch.id);
  } catch {}
  fs.rmSync(launch.dir, { recursive: true, force: true });
}
