import { backendFor } from '../backends/registry.js';
import { launchActiveIds } from '../ledger/launch-tasks.js';
import type { LaunchRow } from '../ledger/launches.js';
import type { Ledger } from '../ledger/ledger.js';
import { activeLaunchesOf } from '../ledger/queries.js';

/** What a cancel stops: each active launch of the job with its queued and running tasks (among those wanted). */
export interface CancelPlan {
  launch: LaunchRow;
  ids: number[];
}

/**
 * The queued and running tasks of a job's active launches, all or only the `wanted` ids — whatever command they
 * run: a task whose command changed may still run its earlier one. The caller brings the ledger up to date first.
 */
export function cancelPlan(ledger: Ledger, jobId: number, wanted?: ReadonlySet<number>): CancelPlan[] {
  return activeLaunchesOf(ledger, jobId).map((launch) => {
    const active = launchActiveIds(ledger, launch.id);
    return { launch, ids: active.filter((id) => !wanted || wanted.has(id)) };
  });
}

/**
 * Ask each launch's backend to stop its planned tasks (`all`: the whole launch, as one scancel/qdel), one
 * transaction per launch. The tasks are recorded cancelled as their backends confirm it (refresh).
 */
export function applyCancel(ledger: Ledger, plan: readonly CancelPlan[], all: boolean): void {
  for (const p of plan) {
    if (p.ids.length === 0) continue;
    ledger.write(() => backendFor(p.launch.backend).cancel(ledger, p.launch, all ? 'all' : p.ids));
  }
}
