import { isProcessAlive, shortHostname } from '../../util/proc.js';
import { forgetQueue, queueSnapshotAsync } from '../gridengine/queue.js';
import { liveElementsAsync } from '../slurm/squeue.js';
import type { WorkerHandle } from './start.js';

/** A worker that registered (in any state since): where it runs. */
export interface RegisteredWorker {
  host: string;
  pid: number;
  /** Its scheduler array element (`A_I`, `J.T`), or null. */
  element: string | null;
}

/**
 * How many workers a pool started that have not registered yet and still may: local processes still alive, and
 * scheduler array elements still queued or running. When the scheduler cannot be asked, every element that has not
 * registered counts (better to start none too many). The scheduler is asked without holding the caller's thread:
 * the controller answers its workers meanwhile.
 */
export async function workersOnTheirWay(
  handles: readonly WorkerHandle[],
  registered: readonly RegisteredWorker[],
): Promise<number> {
  const pids = new Set(registered.map((r) => `${r.host}:${r.pid}`));
  const elements = new Set(registered.map((r) => r.element).filter((e): e is string => e !== null));
  let n = 0;
  for (const h of handles) {
    if (h.kind !== 'local' || pids.has(`${h.host}:${h.pid}`) || h.host !== shortHostname()) continue;
    if (isProcessAlive(h.pid, h.pid_start)) n++;
  }
  const slurm = handles.filter((h) => h.kind === 'slurm');
  if (slurm.length > 0) {
    const live = await liveElementsAsync(slurm.map((h) => h.job));
    for (const h of slurm) {
      for (let i = 1; i <= h.count; i++) {
        const e = `${h.job}_${i}`;
        if (!elements.has(e) && (live === undefined || live.has(e))) n++;
      }
    }
  }
  const ge = handles.filter((h) => h.kind === 'gridengine');
  if (ge.length > 0) {
    forgetQueue(); // a snapshot from before our last qsub would not have its elements
    const queue = await queueSnapshotAsync();
    for (const h of ge) {
      for (let i = 1; i <= h.count; i++) {
        if (!elements.has(`${h.job}.${i}`) && (queue === undefined || queue.get(h.job)?.has(i))) n++;
      }
    }
  }
  return n;
}

/** The scheduler array element this process runs in (from the scheduler's environment), if any. */
export function ownElement(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.SLURM_ARRAY_JOB_ID && env.SLURM_ARRAY_TASK_ID) {
    return `${env.SLURM_ARRAY_JOB_ID}_${env.SLURM_ARRAY_TASK_ID}`;
  }
  if (env.JOB_ID && env.SGE_TASK_ID && /^\d+$/.test(env.SGE_TASK_ID))
    return `${env.JOB_ID}.${env.SGE_TASK_ID}`;
  return undefined;
}

/** Where a worker array's element is in its scheduler. */
export type ElementState = 'waiting' | 'running' | 'error';

/**
 * Where each live element of some worker arrays is in its scheduler (by `A_I` / `J.T` name): waiting in the
 * queue, running (started), or in error (Grid Engine's Eqw: it will not start). An element not in the map is gone.
 * Undefined when the scheduler cannot be asked or its answer cannot be read whole: nothing can be judged gone.
 * Asked without holding the caller's thread (the controller answers its workers meanwhile).
 */
export async function elementStates(
  kind: 'slurm' | 'gridengine',
  jobs: readonly string[],
): Promise<Map<string, ElementState> | undefined> {
  const out = new Map<string, ElementState>();
  if (jobs.length === 0) return out;
  if (kind === 'slurm') {
    const live = await liveElementsAsync(jobs);
    if (live === undefined) return undefined;
    for (const [e, s] of live) out.set(e, s.state === 'PD' ? 'waiting' : 'running');
    return out;
  }
  forgetQueue(); // a snapshot from before our last qsub would not have its elements
  const queue = await queueSnapshotAsync();
  if (queue === undefined) return undefined;
  for (const job of jobs) {
    for (const [i, s] of queue.get(job) ?? []) {
      out.set(`${job}.${i}`, s.includes('E') ? 'error' : s.includes('qw') ? 'waiting' : 'running');
    }
  }
  return out;
}
