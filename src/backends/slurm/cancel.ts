import { launchActiveIds, launchTaskIds } from '../../ledger/launch-tasks.js';
import type { LaunchRow } from '../../ledger/launches.js';
import type { Ledger } from '../../ledger/ledger.js';
import { writeCancelRequest } from '../cluster/cancels.js';
import { commandError, slurmSync } from './commands.js';
import { elementLookup, type SlurmArray, slurmHandles, taskKeys } from './handles.js';

/** Most job arguments in one scancel call. */
const SCANCEL_BATCH = 200;

/** Indices as step-1 ranges (`1-3,5,9-10`): scancel's `A_[...]` takes no `:step`. */
export function indexRanges(indices: readonly number[]): string {
  const sorted = [...new Set(indices)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    parts.push(i === j ? `${sorted[i]}` : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return parts.join(',');
}

/**
 * The scancel arguments that stop the elements whose every still active task is being cancelled: whole
 * arrays for 'all', else `A_[ranges]` per array. Packed elements with other active tasks are left running:
 * their runners read the cancel request and stop just those tasks.
 */
export function scancelTargets(
  arrays: readonly SlurmArray[],
  keyOf: (task: number) => number,
  active: readonly number[],
  cancel: readonly number[] | 'all',
): string[] {
  if (cancel === 'all') return arrays.map((a) => a.id);
  const wanted = new Set(cancel);
  const keep = new Set<number>();
  const stop = new Set<number>();
  for (const t of active) (wanted.has(t) ? stop : keep).add(keyOf(t));
  const elementOf = elementLookup(arrays);
  const byArray = new Map<string, number[]>();
  for (const key of stop) {
    const e = keep.has(key) ? undefined : elementOf(key);
    if (!e) continue;
    const list = byArray.get(e.arrayId);
    if (list) list.push(e.index);
    else byArray.set(e.arrayId, [e.index]);
  }
  return [...byArray].map(([id, indices]) => `${id}_[${indexRanges(indices)}]`);
}

/**
 * Cancel tasks of a Slurm launch: drop the request into the launch's cancel folder (runners of packed elements
 * stop just those tasks; reconciliation records `cancelled` for elements Slurm forgets), then scancel the
 * elements whose active tasks are all cancelled, in batched calls. When a scancel fails (slurmctld cannot be
 * reached), the request is narrowed to the tasks of arrays already scancelled and the failure is thrown.
 */
export function cancelSlurm(ledger: Ledger, launch: LaunchRow, tasks: readonly number[] | 'all'): void {
  const narrow = writeCancelRequest(launch.dir, tasks);
  const h = slurmHandles(launch);
  if (!h) return;
  const active = launchActiveIds(ledger, launch.id);
  const keyOf = taskKeys(ledger, launch.id, h.tasks_per_node);
  const targets = scancelTargets(h.arrays, keyOf, active, tasks);
  for (let i = 0; i < targets.length; i += SCANCEL_BATCH) {
    const r = slurmSync('scancel', targets.slice(i, i + SCANCEL_BATCH));
    if (r.status === 0) continue;
    const unreached = new Set(targets.slice(i).map((t) => t.split('_')[0]));
    const elementOf = elementLookup(h.arrays);
    const asked = tasks === 'all' ? launchTaskIds(ledger, launch.id) : tasks;
    narrow(asked.filter((t) => !unreached.has(elementOf(keyOf(t))?.arrayId)));
    throw commandError('scancel', r);
  }
}
