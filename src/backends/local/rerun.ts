import { DroverError } from '../../errors.js';
import type { JobRow } from '../../ledger/jobs.js';
import { launchDirs } from '../../ledger/launches.js';
import type { Ledger } from '../../ledger/ledger.js';
import { condenseIds } from '../../tasklist/tasklist.js';
import { killAndWait, taskProcesses } from './leftovers.js';

const ids = (procs: readonly { task: number }[]) =>
  condenseIds([...new Set(procs.map((p) => p.task))].sort((a, b) => a - b));

/**
 * Before a launch runs tasks again: stop every process their earlier attempts in this job's local launches left
 * on this host (docs/concepts.md, invariant 2), so two runs of a task never overlap. Their records already say how
 * those attempts ended; what is found here outlived them (a runner killed before it could stop them, a process
 * that left its task's group). Returns a line for the user when it stopped some; refuses (exit 2) when one
 * cannot be stopped. Costs nothing for a job's first launch.
 */
export function stopEarlierAttempts(
  ledger: Ledger,
  job: JobRow,
  taskIds: readonly number[],
): string | undefined {
  const dirs = launchDirs(ledger, job.id, 'local');
  if (dirs.length === 0 || taskIds.length === 0) return undefined;
  const found = taskProcesses(new Set(dirs), new Set(taskIds));
  if (found.length === 0) return undefined;
  const left = killAndWait(found);
  if (left.length > 0) {
    throw new DroverError(
      'conflict',
      `task ${ids(left)} of '${job.name}' still has a process of an earlier attempt that could not be stopped (pid ${left[0]!.pid}): stop it, then launch again`,
    );
  }
  return `drover: stopped ${found.length} process(es) left by earlier attempts of task ${ids(found)} of '${job.name}'`;
}
