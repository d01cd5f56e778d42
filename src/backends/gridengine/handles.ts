import path from 'node:path';
import type { LaunchRow, LaunchTask } from '../../ledger/launches.js';
import { parseBlocks } from '../../tasklist/tasklist.js';
import { type ArrayGroup, planGroups } from '../cluster/plan.js';

/** One `qsub -t` submission of a launch. */
export interface GridEngineArray {
  /** Grid Engine's job id. */
  id: string;
  /** Group key = offset + array index (SGE_TASK_ID). */
  offset: number;
  /** The array's indices as submitted: `first-last:step`. */
  range: string;
}

/** What a Grid Engine launch stores as its backend handles. */
export interface GridEngineHandles {
  arrays: GridEngineArray[];
  /** Tasks per array element (1: one task per element). */
  tasksPerNode: number;
  /**
   * How groups are keyed. `index` (every launch since one qsub per launch): key = element number = 1 + the
   * group's position among the launch's tasks in id order, as launch.json lists them. `task`: key = task id,
   * one array per tasklist block; launches recorded by older drovers (handles without `keys` are those).
   */
  keys: 'task' | 'index';
}

/** What reconciliation has seen of a launch's elements, by `job.index`, in unix seconds (the `sightings` column). */
export interface GridEngineSightings {
  /** When an element was first seen gone from qstat with tasks not yet accounted for. */
  gone?: Record<string, number>;
  /** When an element was first seen in Eqw without a reason in `qstat -j`. */
  eqw?: Record<string, number>;
}

/** A launch's sightings (those of launches recorded by older drovers were moved here by migration 10). */
export function readSightings(launch: Pick<LaunchRow, 'sightings'>): GridEngineSightings {
  return JSON.parse(launch.sightings) as GridEngineSightings;
}

/** One array element of a launch: where Grid Engine has it, and the tasks it runs. */
export interface Element {
  job: string;
  index: number;
  /** Group key in launch.json. */
  key: number;
  tasks: number[];
}

/** The Grid Engine handles of a launch, or undefined before its submission finished. */
export function readHandles(launch: Pick<LaunchRow, 'handles'>): GridEngineHandles | undefined {
  const h = JSON.parse(launch.handles) as Partial<GridEngineHandles>;
  if (!Array.isArray(h.arrays) || h.arrays.length === 0) return undefined;
  return { tasksPerNode: 1, keys: 'task', ...h } as GridEngineHandles;
}

/**
 * The launch's Grid Engine folder: each element's own stdout/stderr (`JOB.INDEX.out`, `.err`: the runner's
 * output, the tasks log on their own) and the stop files of elements Grid Engine stopped (`JOB.INDEX.stop`).
 */
export function elementDir(launchDir: string): string {
  return path.join(launchDir, 'gridengine');
}

/** `job.index`: how an element is named in handles and messages (as qstat/qdel write it). */
export function elementName(job: string, index: number): string {
  return `${job}.${index}`;
}

/**
 * The groups of a launch's tasks (ids in order) as the launch keyed them: 1 + the group's position for `index`
 * (the element numbers launch.json maps to tasks), or planGroups' keys (task ids) for old `task` launches. Pure;
 * submission and reconciliation both place tasks with it.
 */
export function keyedGroups(
  tasks: readonly LaunchTask[],
  tasksPerNode: number,
  keys: 'task' | 'index',
): ArrayGroup[] {
  const groups = planGroups(tasks, tasksPerNode);
  return keys === 'task' ? groups : groups.map((g, i) => ({ key: i + 1, tasks: g.tasks }));
}

/** Every element of a launch: its groups placed in the submitted arrays. Pure. */
export function launchElements(h: GridEngineHandles, ids: readonly number[]): Element[] {
  const where = new Map<number, { job: string; index: number }>();
  for (const a of h.arrays) {
    for (const b of parseBlocks(a.range)) {
      for (let index = b.first; index <= b.last; index += b.step)
        where.set(a.offset + index, { job: a.id, index });
    }
  }
  const out: Element[] = [];
  const tasks = ids.map((id) => ({ id, command: '', tag: '', attempt: 0 }));
  for (const g of keyedGroups(tasks, h.tasksPerNode, h.keys)) {
    const w = where.get(g.key);
    if (w) out.push({ ...w, key: g.key, tasks: g.tasks.map((t) => t.id) });
  }
  return out;
}
