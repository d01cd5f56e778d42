import path from 'node:path';
import type { LaunchTask } from '../../ledger/launches.js';
import type { LaunchRequest } from '../backend.js';
import { type ArrayGroup, planSubmissions, type Submission } from '../cluster/plan.js';
import { elementDir, keyedGroups } from './handles.js';
import { type elementResources, sanitizeJobName } from './options.js';

/**
 * What a Grid Engine launch becomes, pure: its elements numbered 1..k (the k-th element runs the k-th group of
 * the launch's tasks in id order; launch.json records which tasks each element number runs) and one `qsub -t
 * 1-k` for them, or as few submissions as `max_aj_tasks` needs. Grid Engine takes one `first-last:step` range per
 * qsub, so numbering elements by task id would make a scattered tasklist one qsub per block.
 */

/** A launch's plan: its groups (key = element number) and one qsub per submission. */
export interface GridEnginePlan {
  groups: ArrayGroup[];
  subs: { sub: Submission; range: string; argv: string[] }[];
}

/** Groups and submissions of a launch's tasks: elements 1..k, split only past `maxAjTasks` elements. */
export function planElements(
  tasks: readonly LaunchTask[],
  tasksPerNode: number,
  maxAjTasks: number,
): { groups: ArrayGroup[]; subs: Submission[] } {
  const sorted = [...tasks].sort((a, b) => a.id - b.id);
  const groups = keyedGroups(sorted, tasksPerNode, 'index');
  const limit = Math.max(1, maxAjTasks);
  const subs = planSubmissions(
    groups.map((g) => g.key),
    { maxIndex: limit, maxCount: limit, oneRangePerSubmission: true },
  );
  return { groups, subs };
}

/** `first-last:step` of a submission's one block. */
export function rangeOf(sub: Submission): string {
  const b = sub.blocks[0]!;
  return `${b.first}-${b.last}:${b.step}`;
}

/** The script every element of a launch runs. */
export function scriptPath(launchDir: string): string {
  return path.join(launchDir, 'element.sh');
}

/**
 * The plan of a launch with the qsub argv (after `qsub`) of each submission, for the script in `launchDir`: the
 * one plan behind both `submit` and `--dry-run`'s preview.
 */
export function planLaunch(
  tasks: readonly LaunchTask[],
  request: Pick<LaunchRequest, 'tasksPerNode' | 'extraArgs' | 'requeue'>,
  where: { job: string; launchDir: string; maxAjTasks: number },
  res: ReturnType<typeof elementResources>,
): GridEnginePlan {
  const { job, launchDir } = where;
  const { groups, subs } = planElements(tasks, request.tasksPerNode, where.maxAjTasks);
  const logDir = elementDir(launchDir);
  const base = [
    '-terse',
    '-notify',
    '-V',
    '-N',
    sanitizeJobName(job),
    '-S',
    '/bin/bash',
    '-cwd',
    '-o',
    path.join(logDir, '$JOB_ID.$TASK_ID.out'),
    '-e',
    path.join(logDir, '$JOB_ID.$TASK_ID.err'),
    ...res.args,
    // Rescheduled (qmod -rj, a failed host) only for --requeue, whose runner goes on from its records: an
    // element run again otherwise would run its tasks again under the same attempt numbers.
    '-r',
    request.requeue ? 'y' : 'n',
    ...request.extraArgs,
  ];
  return {
    groups,
    subs: subs.map((sub) => {
      const range = rangeOf(sub);
      return { sub, range, argv: [...base, '-t', range, scriptPath(launchDir), String(sub.offset)] };
    }),
  };
}

/** The warning when `-tc` (per array job) applies to several array jobs of one launch. */
export function perJobThrottle(maxTasks: number, arrays: number): string {
  return `--max-tasks ${maxTasks} applies to each of the ${arrays} array jobs (Grid Engine's -tc is per job, and this launch has more elements than the cluster's max_aj_tasks)`;
}
