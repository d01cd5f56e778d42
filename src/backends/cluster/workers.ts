import type { LaunchRequest } from '../backend.js';

/**
 * What the cluster backends share for a pool's workers (`drover pool create --backend slurm|gridengine`): one
 * array job of N elements, each running one `drover worker`, submitted through the same client, argument
 * builders, time limits and refusal parsing as an array launch (slurm/workers.ts, gridengine/workers.ts).
 */

/** One request for `count` more workers of a pool, each asking what a launch of one task per element asks. */
export interface WorkerArray {
  /** The pool's name: its arrays are called `drover-pool-NAME`. */
  pool: string;
  count: number;
  /** The script each element runs (it execs `drover worker`). */
  script: string;
  /** The folder the elements start in (the controller's). */
  cwd: string;
  /** Where the elements' scheduler output goes. */
  logDir: string;
  /** Each worker's resources and scheduler options, as a launch request of one task per element. */
  request: LaunchRequest;
  /** The backend's section of drover's config (partition, account, Grid Engine's resource names). */
  config: Record<string, string>;
}

/** An array job of workers the scheduler accepted. */
export interface SubmittedWorkers {
  job: string;
  count: number;
}

/** A pool's array job name. */
export function workerJobName(pool: string): string {
  return `drover-pool-${pool}`;
}

/** The element counts of the arrays `count` workers take, each `1-k` with k at most `perArray` (the site's limit). */
export function workerChunks(count: number, perArray: number): number[] {
  const size = Math.max(1, perArray);
  const chunks: number[] = [];
  for (let left = count; left > 0; left -= size) chunks.push(Math.min(size, left));
  return chunks;
}
