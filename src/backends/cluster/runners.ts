import type { Ledger } from '../../ledger/ledger.js';
import { runnerNames } from '../../ledger/reconcile-reads.js';

/**
 * Group keys of a cluster launch whose runner wrote records (runners name themselves `g<key>.<host>.<pid>`): the
 * array elements that got as far as starting drover's runner. An element that ended without one never ran its
 * tasks (its configured header failed, its node could not start it).
 */
export function startedGroups(ledger: Ledger, launchId: number): Set<number> {
  const keys = new Set<number>();
  for (const name of runnerNames(ledger, launchId)) {
    const m = /^g(\d+)\./.exec(name);
    if (m) keys.add(Number(m[1]));
  }
  return keys;
}
