import fs from 'node:fs';
import path from 'node:path';
import { DroverError } from '../../errors.js';
import { writeFileAtomic } from '../../files.js';
import { launchTaskIds } from '../../ledger/launch-tasks.js';
import { getLaunch, type LaunchRow, type LaunchTask } from '../../ledger/launches.js';
import type { Ledger } from '../../ledger/ledger.js';
import { launchesWithErrors } from '../../ledger/reconcile-reads.js';
import type { GroupTask, LaunchFile, RunSettings } from '../../runner/group.js';
import { singleEnv, writeSingleRunner } from '../../runner/single.js';
import { condenseIds } from '../../tasklist/tasklist.js';
import type { Preview, PreviewRequest, SubmitRequest, SubmitResult } from '../backend.js';
import { type ArrayLimit, readArrayLimit } from './cluster-config.js';
import { qdel, qdelElements, qsub } from './commands.js';
import {
  elementDir,
  type GridEngineArray,
  type GridEngineHandles,
  launchElements,
  readHandles,
} from './handles.js';
import { elementResources } from './options.js';
import { isErrorState } from './parse.js';
import { perJobThrottle, planLaunch, scriptPath } from './plan.js';
import { forgetQueue, queueSnapshot } from './queue.js';
import { elementScript } from './script.js';

/** `launch --dry-run`: the qsub commands a launch would run (asks the cluster its max_aj_tasks). Submits nothing. */
export function previewGridEngine(req: PreviewRequest): Preview {
  const res = elementResources(req.request, req.config);
  const limit = readArrayLimit();
  const { subs } = planLaunch(
    req.tasks,
    req.request,
    { job: req.job, launchDir: req.dir, maxAjTasks: limit.maxAjTasks },
    res,
  );
  return {
    commands: subs.map((s) => ['qsub', ...s.argv]),
    warnings: warningsOf(res, limit, req.request.maxTasks, subs.length),
  };
}

/** The warnings of a launch: its resources', an assumed max_aj_tasks, a -tc that applies per array job. */
function warningsOf(
  res: ReturnType<typeof elementResources>,
  limit: ArrayLimit,
  maxTasks: number | undefined,
  arrays: number,
): string[] {
  const warnings = [...res.warnings];
  if (limit.warning) warnings.push(limit.warning);
  if (maxTasks !== undefined && arrays > 1) warnings.push(perJobThrottle(maxTasks, arrays));
  return warnings;
}

/**
 * `--failed` after Grid Engine could not start some tasks: their old elements still sit in the queue in `Eqw`.
 * Delete them before the tasks are submitted again, so they cannot run twice; if Grid Engine cannot be asked or
 * a qdel fails, nothing is submitted.
 */
function clearErrorElements(ledger: Ledger, launch: LaunchRow, tasks: readonly LaunchTask[]): void {
  const earlier = launchesWithErrors(
    ledger,
    launch.job_id,
    'gridengine',
    launch.id,
    tasks.map((t) => t.id),
  );
  if (earlier.length === 0) return;
  const wanted = new Set(tasks.map((t) => t.id));
  const queue = queueSnapshot((message) => ledger.warnOnce(message));
  if (!queue) {
    throw new DroverError(
      'backend',
      "Grid Engine's queue could not be read to delete the tasks' elements in Eqw: try again when qstat answers",
    );
  }
  for (const id of earlier) {
    const old = getLaunch(ledger, id);
    const h = old && readHandles(old);
    if (!old || !h) continue;
    const ids = launchTaskIds(ledger, id);
    const outcome = qdelElements(
      launchElements(h, ids).filter((e) => {
        const state = queue.get(e.job)?.get(e.index);
        return state !== undefined && isErrorState(state) && e.tasks.some((t) => wanted.has(t));
      }),
    );
    forgetQueue();
    if (outcome.failure !== undefined)
      throw new DroverError('backend', `qdel of the tasks' elements in Eqw failed: ${outcome.failure}`);
  }
}

/**
 * Submit a launch to Grid Engine: write launch.json (which tasks each element number 1..k runs) and the element
 * script into the launch folder, then one `qsub -terse -t 1-k` (more only past the cluster's max_aj_tasks). If a
 * later qsub fails, the arrays already submitted are deleted before the error is thrown (the caller forgets the
 * launch).
 */
export function submitGridEngine(req: SubmitRequest): SubmitResult {
  const { launch, request, config } = req;
  const res = elementResources(request, config);
  const packed = request.tasksPerNode > 1;
  const limit = readArrayLimit();
  const { groups, subs } = planLaunch(
    req.tasks,
    request,
    { job: req.settings.job, launchDir: launch.dir, maxAjTasks: limit.maxAjTasks },
    res,
  );
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
  // --signal needs drover runner, which times it (Grid Engine's -notify warns only of a stop, at a time the site
  // sets); --requeue too, which runs a task again in its element.
  const single =
    packed || settings.warnSignal !== undefined || settings.requeue !== undefined
      ? undefined
      : {
          ...writeSingleRunner(launch.dir, new Map(groups.map((g) => [g.key, toGroupTask(g.tasks[0]!)]))),
          env: singleEnv(settings),
        };
  const script = scriptPath(launch.dir);
  const spec = { ...req.drover, launchFile: launchPath, config, settings, ...(single ? { single } : {}) };
  fs.writeFileSync(script, elementScript(spec, logDir), { mode: 0o755 });

  const arrays: GridEngineArray[] = [];
  try {
    for (const s of subs) {
      const id = qsub(s.argv, req.settings.cwd);
      arrays.push({ id, offset: s.sub.offset, range: s.range });
    }
  } catch (err) {
    for (const a of arrays) qdel(a.id);
    throw err;
  } finally {
    forgetQueue();
  }

  const warnings = warningsOf(res, limit, request.maxTasks, arrays.length);
  const handles: GridEngineHandles = { arrays, tasksPerNode: request.tasksPerNode, keys: 'index' };
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
