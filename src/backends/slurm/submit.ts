import fs from 'node:fs';
import path from 'node:path';
import { DroverError } from '../../errors.js';
import { writeFileAtomic } from '../../files.js';
import type { LaunchTask } from '../../ledger/launches.js';
import type { GroupTask, LaunchFile, RunSettings } from '../../runner/group.js';
import { formatBlocks } from '../../tasklist/tasklist.js';
import type { LaunchRequest, Preview, PreviewRequest, SubmitRequest, SubmitResult } from '../backend.js';
import { planGroups, planSubmissions } from '../cluster/plan.js';
import { wrapperScript } from '../cluster/wrapper.js';
import { type ClusterConfig, chooseAccounting, readClusterConfig } from './cluster-config.js';
import { slurmAsync, slurmSync } from './commands.js';
import { elementRunnerFits, writeElementRunner } from './element-script.js';
import { feasibilityWarnings } from './feasibility.js';
import { elementOutPattern, type SlurmArray, type SlurmHandles } from './handles.js';
import { checkSlurmRequest, parseJobId, sbatchArgs, sbatchCommonArgs, sbatchRefusal } from './sbatch-args.js';

/**
 * What every runner of a Slurm launch runs with. One task per element: one slot, and the element's GPUs are
 * the task's. Packed: `--max-tasks-per-node` slots, by default the CPUs requested per element (`--cpus`, else
 * the 1 CPU Slurm gives), and the element's GPUs shared out among the slots.
 */
export function runnerSettings(base: RunSettings, req: LaunchRequest): RunSettings {
  const { header: _h, footer: _f, ...settings } = base; // header/footer run once per element, in the wrapper
  const gpus = req.gpus ?? 0;
  if (req.tasksPerNode <= 1) {
    return { ...settings, maxTasks: 1, ...(gpus > 0 ? { gpusPerTask: gpus } : {}) };
  }
  const slots = req.maxTasksPerNode ?? req.cpus ?? 1;
  return {
    ...settings,
    maxTasks: slots,
    ...(gpus > 0 ? { gpusPerTask: Math.max(1, Math.floor(gpus / slots)) } : {}),
  };
}

/** Write the launch's files: launch.json, the element runner when it fits, and the wrapper. */
function writeLaunchFiles(
  req: SubmitRequest,
  settings: RunSettings,
  groups: ReturnType<typeof planGroups>,
): void {
  const dir = req.launch.dir;
  const launchPath = path.join(dir, 'launch.json');
  const toGroupTask = (t: { id: number; command: string; attempt: number }): GroupTask => ({
    id: t.id,
    command: t.command,
    attempt: t.attempt,
  });
  const file: LaunchFile = {
    ...settings,
    groups: Object.fromEntries(groups.map((g) => [String(g.key), g.tasks.map(toGroupTask)])),
  };
  writeFileAtomic(launchPath, JSON.stringify(file));
  fs.mkdirSync(settings.logDir, { recursive: true });
  fs.mkdirSync(settings.recordsDir, { recursive: true });
  let runner = { node: req.drover.node, bin: req.drover.bin };
  const tasks = groups.flatMap((g) => g.tasks.map(toGroupTask));
  if (elementRunnerFits(settings, tasks)) {
    const script = writeElementRunner(dir, {
      settings,
      tasks,
      tasksPerNode: req.request.tasksPerNode,
      ...req.drover,
    });
    runner = { node: 'source', bin: script }; // run by the wrapper's own bash: one bash per element
  }
  const wrapper = wrapperPath(dir);
  writeFileAtomic(
    wrapper,
    wrapperScript({
      indexVar: 'SLURM_ARRAY_TASK_ID',
      ...runner,
      launchFile: launchPath,
      config: req.config,
      settings,
      ...(settings.warnSignal !== undefined ? { relay: settings.warnSignal.signal.slice(3) } : {}),
      // drover's runner in Node outlives Slurm's SIGTERM to write its last records; the bash element runner is
      // the batch shell itself, with its own traps.
      ...(runner.node !== 'source' ? { outlastTerm: true } : {}),
      // --requeue with a time limit: the runner stops before it and exits 99 for the element to run again.
      ...(settings.requeue ? { runAgain: 'scontrol requeue "$SLURM_JOB_ID"' } : {}),
    }),
  );
  fs.chmodSync(wrapper, 0o755);
}

/** The wrapper script every element of a launch runs. */
function wrapperPath(launchDir: string): string {
  return path.join(launchDir, 'slurm.sh');
}

/** Slurm's default MaxArraySize, assumed by a preview when the cluster cannot be asked. */
const DEFAULT_MAX_ARRAY_SIZE = 1001;

/**
 * What a launch becomes: its groups (elements), and one `sbatch` argv per array within the cluster's
 * MaxArraySize. The one plan behind both `submit` and `--dry-run`'s preview.
 */
function plan(
  tasks: readonly LaunchTask[],
  request: LaunchRequest,
  job: string,
  launchDir: string,
  cluster: Pick<ClusterConfig, 'maxArraySize' | 'maxArrayTasks'>,
) {
  if (cluster.maxArraySize < 2) {
    throw new DroverError(
      'backend',
      `this cluster's MaxArraySize=${cluster.maxArraySize} allows no job arrays: ask its admins to raise it`,
    );
  }
  const groups = planGroups(tasks, request.tasksPerNode);
  const subs = planSubmissions(
    groups.map((g) => g.key),
    { maxIndex: cluster.maxArraySize - 1, maxCount: cluster.maxArrayTasks, oneRangePerSubmission: false },
  );
  const common = sbatchCommonArgs(request, job, elementOutPattern(launchDir));
  const wrapper = wrapperPath(launchDir);
  return { groups, subs: subs.map((sub) => ({ sub, argv: sbatchArgs(sub, common, request, wrapper) })) };
}

/** `launch --dry-run`: the sbatch commands a launch would run. Asks the cluster its limits, submits nothing. */
export function previewSlurm(req: PreviewRequest): Preview {
  checkSlurmRequest(req.request);
  let cluster: Pick<ClusterConfig, 'maxArraySize' | 'maxArrayTasks'>;
  let warnings: string[];
  try {
    cluster = readClusterConfig();
    warnings = feasibilityWarnings(req.request);
  } catch (err) {
    // A cluster that cannot tell its configuration (most often: its controller is down, and each client waits
    // out Slurm's MessageTimeout) is not asked for its nodes as well.
    cluster = { maxArraySize: DEFAULT_MAX_ARRAY_SIZE, maxArrayTasks: DEFAULT_MAX_ARRAY_SIZE };
    warnings = [
      `could not read the cluster's MaxArraySize (${(err as Error).message}): arrays split as for Slurm's default ${DEFAULT_MAX_ARRAY_SIZE}, and the nodes' resources were not checked`,
    ];
  }
  const { subs } = plan(req.tasks, req.request, req.job, req.dir, cluster);
  return { commands: subs.map((s) => ['sbatch', ...s.argv]), warnings };
}

/** Stop arrays already submitted when a later submission of the same launch failed (best effort). */
function withdraw(arrays: readonly SlurmArray[]): void {
  if (arrays.length === 0) return;
  try {
    slurmSync(
      'scancel',
      arrays.map((a) => a.id),
    );
  } catch {
    // the error that made us withdraw is the one to report
  }
}

/**
 * Submit a launch as Slurm job arrays: group the tasks (one per element, or packed), write the launch files,
 * split the elements into arrays within MaxArraySize, and run one `sbatch --parsable --array=...` per array.
 * If one fails, those already submitted are cancelled and the error is thrown (the caller rolls back).
 */
export async function submitSlurm(req: SubmitRequest): Promise<SubmitResult> {
  const request = req.request;
  checkSlurmRequest(request);
  const cluster = readClusterConfig();
  const settings = runnerSettings(req.settings, request);
  const { groups, subs } = plan(req.tasks, request, settings.job, req.launch.dir, cluster);
  writeLaunchFiles(req, settings, groups);
  const warnings = feasibilityWarnings(request);
  const accounting = chooseAccounting(cluster);
  const arrays: SlurmArray[] = [];
  try {
    for (const { sub, argv } of subs) {
      const r = await slurmAsync('sbatch', argv);
      if (r.status !== 0) throw sbatchRefusal(r);
      const id = parseJobId(r.stdout);
      // sbatch said it submitted the array, but which array is unknown: it cannot be withdrawn from here.
      if (id === undefined)
        throw new DroverError(
          'backend',
          `sbatch submitted an array but printed no whole job id ('${r.stdout.trim()}'): find it with squeue --me --name=${settings.job} and scancel it`,
        );
      arrays.push({ id, offset: sub.offset, array: formatBlocks(sub.blocks) });
    }
  } catch (err) {
    withdraw(arrays);
    throw err;
  }
  const handles: SlurmHandles = { arrays, tasks_per_node: Math.max(1, request.tasksPerNode), accounting };
  const shape =
    request.tasksPerNode > 1
      ? `${groups.length} array element(s) of up to ${request.tasksPerNode} tasks, ${settings.maxTasks} at a time in each`
      : `one task per array element`;
  const ids = arrays.map((a) => a.id).join(', ');
  return {
    handles,
    summary: `${req.tasks.length} task(s) of '${settings.job}' submitted to Slurm as array ${ids} (${shape})`,
    warnings,
  };
}
