import type { LaunchTask } from '../../ledger/launches.js';
import { condenseBlocks, type TaskBlock } from '../../tasklist/tasklist.js';

/**
 * Pure planning shared by the cluster backends: which tasks each array element runs, and how the elements are
 * split into submissions the scheduler accepts.
 */

/** The tasks one array element runs; `key` names the group in the launch file. */
export interface ArrayGroup {
  key: number;
  tasks: LaunchTask[];
}

/**
 * Group a launch's tasks (in id order) into array elements. One task per element: the key is the task id, so
 * `squeue`/`qstat` show task ids. Packed: consecutive chunks of `tasksPerNode` tasks, keyed 1..G.
 */
export function planGroups(tasks: readonly LaunchTask[], tasksPerNode: number): ArrayGroup[] {
  if (tasksPerNode <= 1) return tasks.map((t) => ({ key: t.id, tasks: [t] }));
  const groups: ArrayGroup[] = [];
  for (let i = 0; i < tasks.length; i += tasksPerNode) {
    groups.push({ key: groups.length + 1, tasks: tasks.slice(i, i + tasksPerNode) });
  }
  return groups;
}

/** One scheduler submission: array indices (blocks) and the offset that turns an index back into a group key. */
export interface Submission {
  /** Group key = offset + array index. */
  offset: number;
  /** Array indices of this submission, as tasklist blocks. */
  blocks: TaskBlock[];
  /** Number of elements. */
  count: number;
}

/** What a scheduler accepts in one array submission. */
export interface ArrayLimits {
  /** Highest array index allowed (Slurm: MaxArraySize - 1; Grid Engine: 75000 ... ). */
  maxIndex: number;
  /** Most elements in one submission. */
  maxCount: number;
  /** Grid Engine takes one `first-last:step` range per submission. */
  oneRangePerSubmission: boolean;
}

/**
 * Split group keys into submissions within the limits. Keys stay the array indices (offset 0) whenever they
 * fit, so indices match task ids; otherwise each submission gets a consecutive run of keys re-based to start
 * at index 1.
 */
export function planSubmissions(keys: readonly number[], limits: ArrayLimits): Submission[] {
  const sorted = [...keys].sort((a, b) => a - b);
  if (sorted.length === 0) return [];
  const subs: Submission[] = [];
  const fits = sorted[sorted.length - 1]! <= limits.maxIndex && sorted.length <= limits.maxCount;
  const runs = fits ? [sorted] : chunkRuns(sorted, limits);
  for (const run of runs) {
    const offset = fits ? 0 : run[0]! - 1;
    const blocks = condenseBlocks(run.map((k) => k - offset));
    if (limits.oneRangePerSubmission) {
      for (const b of blocks)
        subs.push({ offset, blocks: [b], count: Math.floor((b.last - b.first) / b.step) + 1 });
    } else {
      subs.push({ offset, blocks, count: run.length });
    }
  }
  return subs;
}

/** Consecutive runs of keys, each spanning fewer than maxIndex values and holding at most maxCount keys. */
function chunkRuns(sorted: readonly number[], limits: ArrayLimits): number[][] {
  const runs: number[][] = [];
  let run: number[] = [];
  for (const k of sorted) {
    if (run.length > 0 && (run.length >= limits.maxCount || k - run[0]! + 1 > limits.maxIndex)) {
      runs.push(run);
      run = [];
    }
    run.push(k);
  }
  if (run.length > 0) runs.push(run);
  return runs;
}
