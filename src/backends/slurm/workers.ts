import path from 'node:path';
import { DroverError } from '../../errors.js';
import { type SubmittedWorkers, type WorkerArray, workerChunks, workerJobName } from '../cluster/workers.js';
import { readClusterConfigAsync } from './cluster-config.js';
import { slurmAsync } from './commands.js';
import { parseJobId, sbatchCommonArgs, sbatchRefusal } from './sbatch-args.js';

/**
 * A pool's workers as Slurm array jobs: `sbatch --parsable --array=1-N` with the options an array launch of one
 * task per element gets (sbatch-args.ts), split within the cluster's MaxArraySize and max_array_tasks, through
 * the same client (time limit, refusal parsing). Asynchronous: the controller submits them, and must go on
 * answering its workers while Slurm thinks.
 */

/** The argv (after `sbatch`) of one array of `count` workers. */
export function workerSbatchArgs(a: WorkerArray, count: number): string[] {
  const out = path.join(a.logDir, 'slurm-%A_%a.log');
  return [
    '--parsable',
    `--array=1-${count}`,
    `--chdir=${a.cwd}`,
    ...sbatchCommonArgs(a.request, workerJobName(a.pool), out),
    ...a.request.extraArgs,
    a.script,
  ];
}

/** Submit the workers; if one of several arrays is refused, those accepted before it are cancelled. */
export async function submitSlurmWorkers(a: WorkerArray): Promise<SubmittedWorkers[]> {
  const cluster = await readClusterConfigAsync();
  const perArray = Math.min(cluster.maxArraySize - 1, cluster.maxArrayTasks);
  const done: SubmittedWorkers[] = [];
  try {
    for (const count of workerChunks(a.count, perArray)) {
      const r = await slurmAsync('sbatch', workerSbatchArgs(a, count));
      if (r.status !== 0) throw sbatchRefusal(r, `the workers of pool '${a.pool}'`);
      const job = parseJobId(r.stdout);
      if (job === undefined)
        throw new DroverError(
          'backend',
          `sbatch submitted workers but printed no whole job id ('${r.stdout.trim()}'): find them with squeue --me --name=${workerJobName(a.pool)} and scancel them`,
        );
      done.push({ job, count });
    }
  } catch (err) {
    await cancelSlurmWorkers(done.map((d) => d.job));
    throw err;
  }
  return done;
}

/** `scancel` of worker arrays (best effort: an array that ended is gone already). */
export async function cancelSlurmWorkers(jobs: readonly string[]): Promise<void> {
  if (jobs.length === 0) return;
  try {
    await slurmAsync('scancel', jobs);
  } catch {
    // not reachable: the workers leave at their time limit, or when the controller is gone
  }
}
