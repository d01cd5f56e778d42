import path from 'node:path';
import { type SubmittedWorkers, type WorkerArray, workerChunks, workerJobName } from '../cluster/workers.js';
import { readArrayLimitAsync } from './cluster-config.js';
import { qsubAsync, runCommandAsync } from './commands.js';
import { elementResources, sanitizeJobName } from './options.js';

/**
 * A pool's workers as Grid Engine array jobs: `qsub -t 1-N` with the resources an array launch of one task per
 * element asks (options.ts: `-pe` from the config's pe, memory per slot in the site's mem_resource, GPUs only in
 * a configured gpu_resource), split within max_aj_tasks, through the same client (time limit, refusal parsing).
 * Asynchronous: the controller submits them, and must go on answering its workers while qsub waits.
 */

/** The argv (after `qsub`) of one array of `count` workers. */
export function workerQsubArgs(a: WorkerArray, count: number): string[] {
  const res = elementResources(a.request, a.config);
  return [
    '-terse',
    '-t',
    `1-${count}`,
    '-N',
    sanitizeJobName(workerJobName(a.pool)),
    '-wd',
    a.cwd,
    '-j',
    'y',
    '-o',
    path.join(a.logDir, 'sge-$JOB_ID.$TASK_ID.log'),
    '-S',
    '/bin/bash',
    ...res.args,
    ...a.request.extraArgs,
    a.script,
  ];
}

/** Submit the workers; if one of several arrays is refused, those accepted before it are deleted. */
export async function submitGridEngineWorkers(a: WorkerArray): Promise<SubmittedWorkers[]> {
  workerQsubArgs(a, 1); // a request the config cannot express is refused before Grid Engine is asked anything
  const limit = await readArrayLimitAsync();
  const done: SubmittedWorkers[] = [];
  try {
    for (const count of workerChunks(a.count, limit.maxAjTasks)) {
      const job = await qsubAsync(workerQsubArgs(a, count), a.cwd, `the workers of pool '${a.pool}'`);
      done.push({ job, count });
    }
  } catch (err) {
    await cancelGridEngineWorkers(done.map((d) => d.job));
    throw err;
  }
  return done;
}

/** `qdel` of worker arrays (best effort: an array that ended is gone already). */
export async function cancelGridEngineWorkers(jobs: readonly string[]): Promise<void> {
  if (jobs.length > 0) await runCommandAsync('qdel', jobs);
}
