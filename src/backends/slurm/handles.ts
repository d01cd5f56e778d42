import path from 'node:path';
import { launchTaskIds } from '../../ledger/launch-tasks.js';
import type { LaunchRow } from '../../ledger/launches.js';
import type { Ledger } from '../../ledger/ledger.js';
import { expandBlocks, parseBlocks } from '../../tasklist/tasklist.js';
import type { Accounting } from './cluster-config.js';

/** One `sbatch --array` submission of a launch. */
export interface SlurmArray {
  /** The array's job id, as sbatch printed it. */
  id: string;
  /** Group key = offset + array index. */
  offset: number;
  /** The array indices, as given to --array (without the %N throttle). */
  array: string;
}

/** A Slurm launch's handles, stored with the launch in the ledger. */
export interface SlurmHandles {
  arrays: SlurmArray[];
  /** Tasks per array element (1: the group key is the task id). */
  tasks_per_node: number;
  /** Where final element states come from when squeue no longer knows an element. */
  accounting: Accounting;
}

/** One array element: `<array id>_<index>`, as squeue and scancel name it. */
export interface Element {
  arrayId: string;
  index: number;
}

/** The handles of a Slurm launch, or undefined while it is being submitted. */
export function slurmHandles(launch: Pick<LaunchRow, 'handles'>): SlurmHandles | undefined {
  const h = JSON.parse(launch.handles) as Partial<SlurmHandles>;
  if (!Array.isArray(h.arrays) || h.arrays.length === 0) return undefined;
  return {
    arrays: h.arrays,
    tasks_per_node: h.tasks_per_node ?? 1,
    accounting: h.accounting ?? { kind: 'none' },
  };
}

/** `A_I`: how Slurm names an array element. */
export function elementName(e: Element): string {
  return `${e.arrayId}_${e.index}`;
}

/** The file an array element's own stdout and stderr go to (sbatch -o with %A_%a filled in). */
export function elementOutFile(launchDir: string, e: Element): string {
  return path.join(launchDir, `slurm-${e.arrayId}_${e.index}.out`);
}

/** The sbatch -o pattern of a launch's elements. */
export function elementOutPattern(launchDir: string): string {
  return path.join(launchDir, 'slurm-%A_%a.out');
}

/** A lookup from group key to its array element, over every array of a launch. */
export function elementLookup(arrays: readonly SlurmArray[]): (key: number) => Element | undefined {
  const byKey = new Map<number, Element>();
  for (const a of arrays) {
    for (const index of expandBlocks(parseBlocks(a.array)))
      byKey.set(a.offset + index, { arrayId: a.id, index });
  }
  return (key) => byKey.get(key);
}

/**
 * The group key of each of a launch's tasks (sorted ids): the task id itself with one task per element, else
 * consecutive chunks of `tasksPerNode` numbered from 1 (as planGroups makes them).
 */
export function groupKeys(sortedTaskIds: readonly number[], tasksPerNode: number): Map<number, number> {
  const keys = new Map<number, number>();
  sortedTaskIds.forEach((id, i) => {
    keys.set(id, tasksPerNode <= 1 ? id : Math.floor(i / tasksPerNode) + 1);
  });
  return keys;
}

/** A lookup from task id to its group key in a launch (reads the launch's task ids only when packed). */
export function taskKeys(ledger: Ledger, launchId: number, tasksPerNode: number): (task: number) => number {
  if (tasksPerNode <= 1) return (task) => task;
  const keys = groupKeys(launchTaskIds(ledger, launchId), tasksPerNode);
  return (task) => keys.get(task) ?? 0;
}
