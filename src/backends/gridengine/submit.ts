import fs from 'node:fs';
import path from 'node:path';
import { getLaunch, type LaunchRow, type LaunchTask } from '../../ledger/launches.js';
import type { Ledger } from '../../ledger/ledger.js';
import { type GroupTask, type LaunchFile, type RunSettings, writeFileAtomic } from '../../runner/group.js';
import { singleEnv, writeSingleRunner } from '../../runner/single.js';
import { condenseIds } from '../../tasklist/tasklist.js';
import type { Preview, PreviewRequest, SubmitRequest, SubmitResult } from '../backend.js';
import { planSubmissions, type Submission } from '../cluster/plan.js';
import { qdel, qdelElements, qsub } from './commands.js';
import {
  elementDir,
  type GridEngineArray,
  type GridEngineHandles,
  keyedGroups,
  launchElements,
  readHandles,
} from './handles.js';
import { elementResources, sanitizeJobName } from './options.js';
import { isErrorState } from './parse.js';
import { forgetQueue, queueSnapshot } from './queue.js';
import { launchTaskStates } from './reconcile.js';
import { elementScript } from './script.js';

/** Grid Engine's array limits: indices 1..75000, one `first-last:step` range per qsub. */
const LIMITS = { maxIndex: 75000, maxCount: 75000, oneRangePerSubmission: true };

/**
 * More qsub calls than this for one launch (a scattered tasklist, e.g. `--failed` after a big sweep) and the
 * elements are numbered 1..N instead of by task id, so the launch is one submission.
 */
const MAX_SUBMISSIONS = 16;

/** Plan the groups and submissions: by task id while that takes few qsub calls, else by position. */
function plan(tasks: readonly LaunchTask[], tasksPerNode: number) {
  let keys: GridEngineHandles['keys'] = tasksPerNode > 1 ? 'index' : 'task';
  let groups = keyedGroups(tasks, tasksPerNode, keys);
  let subs = planSubmissions(
    groups.map((g) => g.key),
    LIMITS,
  );
  if (keys === 'task' && subs.length > MAX_SUBMISSIONS) {
    keys = 'index';
    groups = keyedGroups(tasks, tasksPerNode, keys);
    subs = planSubmissions(
      groups.map((g) => g.key),
      LIMITS,
    );
  }
  return { keys, groups, subs };
}

/**
 * The qsub argv of each submission (after `qsub`), for the script in `launchDir`: the one plan behind both
 * `submit` and `--dry-run`'s preview.
 */
function qsubArgvs(
  subs: readonly Submission[],
  job: string,
  launchDir: string,
  res: ReturnType<typeof elementResources>,
  extraArgs: readonly string[],
): string[][] {
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
    ...extraArgs,
  ];
  return subs.map((sub) => [...base, '-t', rangeOf(sub), scriptPath(launchDir), String(sub.offset)]);
}

/** The script every element of a launch runs. */
function scriptPath(launchDir: string): string {
  return path.join(launchDir, 'element.sh');
}

/** `launch --dry-run`: the qsub commands a launch would run. Submits nothing. */
export function previewGridEngine(req: PreviewRequest): Preview {
  const res = elementResources(req.request, req.config);
  const { subs } = plan(req.tasks, req.request.tasksPerNode);
  const warnings = [...res.warnings];
  if (req.request.maxTasks !== undefined && subs.length > 1)
    warnings.push(perJobThrottle(req.request.maxTasks, subs.length));
  return {
    commands: qsubArgvs(subs, req.job, req.dir, res, req.request.extraArgs).map((a) => ['qsub', ...a]),
    warnings,
  };
}

function perJobThrottle(maxTasks: number, arrays: number): string {
  return `--max-tasks ${maxTasks} applies to each of the ${arrays} array jobs (Grid Engine's -tc is per job)`;
}

/** `first-last:step` of a submission's one block. */
function rangeOf(sub: Submission): string {
  const b = sub.blocks[0]!;
  return `${b.first}-${b.last}:${b.step}`;
}

/**
 * `--failed` after Grid Engine could not start some tasks: their old elements still sit in the queue in `Eqw`.
 * Delete them before the tasks are submitted again, so they cannot run twice.
 */
function clearErrorElements(ledger: Ledger, launch: LaunchRow, tasks: readonly LaunchTask[]): void {
  const rows = ledger
    .stmt(
      `SELECT DISTINCT a.launch_id AS launch FROM attempts a JOIN launches l ON l.id = a.launch_id
       WHERE a.job_id = ? AND a.state = 'error' AND l.backend = 'gridengine' AND a.launch_id != ?
         AND a.task_id IN (SELECT value FROM json_each(?))`,
    )
    .all(launch.job_id, launch.id, JSON.stringify(tasks.map((t) => t.id))) as { launch: number }[];
  if (rows.length === 0) return;
  const wanted = new Set(tasks.map((t) => t.id));
  const queue = queueSnapshot();
  if (!queue) return;
  for (const { launch: id } of rows) {
    const old = getLaunch(ledger, id);
    const h = old && readHandles(old);
    if (!old || !h) continue;
    const ids = launchTaskStates(ledger, id).map((r) => r.task_id);
    qdelElements(
      launchElements(h, ids).filter((e) => {
        const state = queue.get(e.job)?.get(e.index);
        return state !== undefined && isErrorState(state) && e.tasks.some((t) => wanted.has(t));
      }),
    );
  }
  forgetQueue();
}

/**
 * Submit a launch to Grid Engine: write launch.json and the element script into the launch folder, then one
 * `qsub -terse -t first-last:step` per block. If a later qsub fails, the arrays already submitted are deleted
 * before the error is thrown (the caller forgets the launch).
 */
export function submitGridEngine(req: SubmitRequest): SubmitResult {
  const { launch, request, config } = req;
  const res = elementResources(request, config);
  const packed = request.tasksPerNode > 1;
  const { keys, groups, subs } = plan(req.tasks, request.tasksPerNode);
  clearErrorElements(req.ledger, launch, req.tasks);

  const settings: RunSettings = {
    ...req.settings,
    maxTasks: res.runnerSlots,
    ...(packed && request.gpus !== undefined && request.gpus > 0 ? { gpusPerTask: request.gpus } : {}),
  };
  const toGroupTask = (t: LaunchTask): GroupTask => ({ id: t.id, command: t.command, attempt: t.attempt });
  const launchFile: LaunchFile = {
    ...settings,
    groups: Object.fromEntries(groups.map((g) => [String(g.key), g.tasks.map(toGroupTask)])),
  };
  const launchPath = path.join(launch.dir, 'launch.json');
  writeFileAtomic(launchPath, JSON.stringify(launchFile));
  const logDir = elementDir(launch.dir);
  fs.mkdirSync(logDir, { recursive: true });
  fs.mkdirSync(settings.logDir, { recursive: true });
  fs.mkdirSync(settings.recordsDir, { recursive: true });
  // One task per element: the light single-task runner (Perl, runner/single.ts) instead of Node.
  const single = packed
    ? undefined
    : {
        ...writeSingleRunner(launch.dir, new Map(groups.map((g) => [g.key, toGroupTask(g.tasks[0]!)]))),
        env: singleEnv(settings),
      };
  const script = scriptPath(launch.dir);
  const spec = { ...req.drover, launchFile: launchPath, config, settings, ...(single ? { single } : {}) };
  fs.writeFileSync(script, elementScript(spec, logDir), { mode: 0o755 });

  const argvs = qsubArgvs(subs, req.settings.job, launch.dir, res, request.extraArgs);
  const arrays: GridEngineArray[] = [];
  try {
    for (const [i, sub] of subs.entries()) {
      const id = qsub(argvs[i]!, req.settings.cwd);
      arrays.push({ id, offset: sub.offset, range: rangeOf(sub) });
    }
  } catch (err) {
    for (const a of arrays) qdel(a.id);
    throw err;
  } finally {
    forgetQueue();
  }

  const warnings = [...res.warnings];
  if (request.maxTasks !== undefined && arrays.length > 1) {
    warnings.push(perJobThrottle(request.maxTasks, arrays.length));
  }
  const handles: GridEngineHandles = { arrays, tasksPerNode: request.tasksPerNode, keys };
  const what = packed
    ? `${groups.length} element(s) of up to ${request.tasksPerNode} tasks, ${res.runnerSlots} at once`
    : `${groups.length} element(s)`;
  const resources = res.summary.length > 0 ? `; ${res.summary.join(', ')}` : '';
  return {
    handles,
    summary: `${req.tasks.length} task(s) (${condenseIds(req.tasks.map((t) => t.id))}) submitted to Grid Engine as job ${arrays.map((a) => a.id).join(', ')}: ${what}${resources}`,
    warnings,
  };
}
