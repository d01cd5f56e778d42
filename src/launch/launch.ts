import fs from 'node:fs';
import path from 'node:path';
import {
  type Backend,
  isRanInPart,
  type LaunchOutcome,
  type LaunchPlan,
  type RunObserver,
} from '../backends/backend.js';
import { refresh } from '../backends/refresh.js';
import { launchBackend } from '../backends/registry.js';
import { type BackendName, backendConfig } from '../config/config.js';
import { ioError, isSystemError, toDroverError } from '../errors.js';
import { recordHistory } from '../ledger/history.js';
import type { JobRow } from '../ledger/jobs.js';
import {
  getLaunch,
  iterateLaunchTasks,
  type LaunchRow,
  type LaunchTask,
  launchTasks,
  refuseActive,
  setLaunchHandles,
  taskSelection,
} from '../ledger/launches.js';
import type { Ledger } from '../ledger/ledger.js';
import { ledgerError } from '../ledger/open.js';
import { createLaunch } from '../ledger/transitions.js';
import { poolOf } from '../protocol/backend-ref.js';
import type { RunSettings } from '../runner/group.js';
import { REQUEUE_EXIT_DEFAULT } from '../runner/reasons.js';
import { condenseIds } from '../tasklist/tasklist.js';
import { parseInteger } from '../util/integer.js';
import { COUNTS } from '../util/limits.js';
import { formatWarnSignal } from '../util/warn-signal.js';
import { launchJob, type Workspace } from './job.js';
import { selectTasks } from './select.js';
import { checkSpec, isChecked, type LaunchSpec } from './spec.js';
import { stopEarlierAttempts } from './stop-earlier.js';
import { takeBack } from './undo.js';

/** Who is launching: the drover that starts runners, and what to tell the user along the way. */
export interface LaunchContext {
  /** Path of the drover entry script and of the node binary, to start runners (detached, or on nodes). */
  drover: { bin: string; node: string };
  /** One line for the user (a changed jobfile, processes stopped before a rerun). */
  report?: (line: string) => void;
  /** Local, foreground: who watches the tasks as they run. */
  observer?: (count: number, job: string) => RunObserver;
  /** Errors about a jobfile name the file, never its contents (the API: a request may name any file). */
  quietJobfile?: boolean;
}

/** What a launch did: its job and tasks, the launch (null for a dry run or nothing to launch), the outcome. */
export interface LaunchResult {
  jobname: string;
  backend: string;
  /** Null: a dry run, or nothing selected (`count` 0). */
  launch: LaunchRow | null;
  tasklist: string;
  count: number;
  /** Dry runs of backends that make task rows at once: the tasks that would run. */
  tasks?: { id: number; command: string }[];
  outcome?: LaunchOutcome;
  /** A stopped foreground launch whose last records the ledger could not take (they stay in its files). */
  unrecorded?: boolean;
}

/** The config section of a backend (pool launches read the pool's). */
function configOf(ws: Workspace, backend: string): Record<string, string> {
  const name = (poolOf(backend) !== undefined ? 'pool' : backend) as BackendName;
  return backendConfig(ws.paths.localConfig, name);
}

/** What every runner of the launch shares. */
function runSettings(
  ws: Workspace,
  spec: LaunchSpec,
  job: JobRow,
  id: number,
  dir: string,
  retries: number,
  config: Record<string, string>,
): RunSettings {
  const venv = spec.venv ?? config.venv;
  const taskTimeout = spec.taskTimeout ?? (spec.backend === 'local' ? spec.request.duration : undefined);
  return {
    v: 1,
    job: job.name,
    launch: id,
    retries,
    retryDelay: spec.retryDelay,
    ...(taskTimeout !== undefined ? { taskTimeout } : {}),
    killGrace: spec.killGrace,
    ...(spec.signal !== undefined ? { warnSignal: spec.signal } : {}),
    ...(spec.requeue ? { requeue: spec.requeue, requeueExit: spec.requeueExit ?? REQUEUE_EXIT_DEFAULT } : {}),
    // A cluster element's limit, which its runner times tasks' warnings and DROVER_DEADLINE by.
    ...(spec.backend !== 'local' && spec.request.duration !== undefined
      ? { runnerLimit: spec.request.duration }
      : {}),
    logDir: ws.paths.logDir(job.name, id),
    logs: spec.logs ?? launchBackend(spec.backend).traits.logs[0]!,
    recordsDir: path.join(dir, 'records'),
    cancelDir: path.join(dir, 'cancel'),
    ...(venv ? { venv: path.resolve(spec.cwd, venv) } : {}),
    ...(spec.env ? { env: spec.env } : {}),
    cwd: spec.cwd,
  };
}

/** The selected task ids, fresh: --failed/--unfinished select by state, and attempt numbers continue. */
function selectedIds(ws: Workspace, spec: LaunchSpec, job: JobRow, backend: Backend): number[] | 'ranks' {
  if (spec.numJobs !== undefined) return 'ranks';
  // A pool launch stays constant-time up to submission: it reads states only when it selects by them.
  if (backend.traits.taskRows === 'eager' || spec.failed || spec.unfinished) refresh(ws.ledger, job.id);
  return selectTasks(ws.ledger, job, spec);
}

/**
 * Launch (or dry-run) a spec: check it, resolve its job and tasks, refuse tasks that run already, stop what their
 * earlier attempts left, record the launch in one transaction, and hand it to its backend. Used by the CLI and
 * by the controller's launch route alike.
 */
export async function launch(ws: Workspace, spec: LaunchSpec, ctx: LaunchContext): Promise<LaunchResult> {
  const backend = launchBackend(spec.backend);
  if (!isChecked(spec)) checkSpec(spec, backend);
  const config = configOf(ws, spec.backend);
  const request = {
    ...spec.request,
    ...(spec.request.maxTasks === undefined && config.max_tasks
      ? { maxTasks: parseInteger(config.max_tasks, 'max_tasks in drover config', COUNTS.tasks) }
      : {}),
    ...(spec.request.partition === undefined && config.partition ? { partition: config.partition } : {}),
    ...(spec.request.account === undefined && config.account ? { account: config.account } : {}),
    ...(spec.request.qos === undefined && config.qos ? { qos: config.qos } : {}),
    ...(spec.signal !== undefined ? { signal: spec.signal } : {}),
    ...(spec.requeue ? { requeue: spec.requeue } : {}),
  };
  const retries =
    spec.retries ??
    (config.retries ? parseInteger(config.retries, 'retries in drover config', COUNTS.retries) : 0);
  const report = ctx.report ?? (() => {});
  // A rank job is made in the launch's own transaction; every other job exists before (or is made from a jobfile).
  const made = () => {
    const job = launchJob(ws, spec, { report, ...(ctx.quietJobfile ? { quiet: true } : {}) });
    const selected = selectedIds(ws, spec, job, backend);
    const ids = selected === 'ranks' ? undefined : selected;
    if (ids) refuseActive(ws.ledger, job, ids);
    return { job, ids };
  };
  if (spec.dryRun) return dryRun(ws, spec, backend, made, { request, retries, config, drover: ctx.drover });
  const transaction =
    backend.traits.taskRows === 'lazy' ? <T>(fn: () => T) => ws.ledger.write(fn) : <T>(fn: () => T) => fn();
  const recorded = transaction(() => {
    const { job, ids } = made();
    if (ids?.length === 0) return { job, launch: null, plan: null };
    if (ids && backend.traits.taskRows === 'eager') {
      const stopped = stopEarlierAttempts(ws.ledger, job, ids);
      if (stopped) report(stopped);
    }
    const options = {
      ...request,
      retries,
      retryDelay: spec.retryDelay,
      taskTimeout: spec.taskTimeout,
      killGrace: spec.killGrace,
      ...(spec.signal !== undefined ? { signal: formatWarnSignal(spec.signal) } : {}),
      ...(spec.requeueExit !== undefined ? { requeueExit: spec.requeueExit } : {}),
      detach: spec.detach === true,
      result: spec.result ?? 'file',
      ...(spec.command !== undefined ? { command: spec.command } : {}),
      ...(spec.numJobs !== undefined ? { num_jobs: spec.numJobs } : {}),
    };
    return ws.ledger.write(() => {
      const { launch, ids: present } = createLaunch(
        ws.ledger,
        job,
        spec.backend,
        ids ?? { ranks: spec.numJobs! },
        options,
        (id) => ws.paths.launchDir(job.name, id),
        backend.traits.taskRows,
      );
      const settings = runSettings(ws, spec, job, launch.id, launch.dir, retries, config);
      // Its tasks: those the launch row took (eager), or those selected, whose rows a pool makes as it goes.
      const taskIds = backend.traits.taskRows === 'eager' ? present : (ids ?? []);
      const plan: LaunchPlan & { launch: LaunchRow } = {
        ledger: ws.ledger,
        paths: ws.paths,
        backend: spec.backend,
        job,
        launch,
        dir: launch.dir,
        tasklist: launch.tasklist,
        count: launch.task_count,
        ...taskSource(ws.ledger, job.id, taskIds),
        settings,
        request,
        config,
        drover: ctx.drover,
        detach: spec.detach === true,
        ...(spec.numJobs !== undefined ? { numJobs: spec.numJobs } : {}),
      };
      backend.record?.(plan);
      const handles = backend.initialHandles?.();
      if (handles) setLaunchHandles(ws.ledger, launch.id, handles);
      recordHistory(ws.ledger, { kind: 'launch', jobname: job.name, argv: spec.argv, launchId: launch.id });
      return { job, launch, plan };
    });
  });
  const { job, launch: row, plan } = recorded;
  if (!row || !plan)
    return { jobname: job.name, backend: spec.backend, launch: null, tasklist: '', count: 0 };
  if (ctx.observer) plan.observe = ctx.observer;
  let handed = false;
  plan.recordHandles = (handles) => {
    setLaunchHandles(ws.ledger, row.id, handles);
    handed = true;
  };
  let outcome: LaunchOutcome;
  try {
    fs.mkdirSync(row.dir, { recursive: true });
    outcome = await backend.launch(plan, 'submit');
  } catch (err) {
    // The one undo of a launch: unless its backend says some of its tasks ran (ranInPart), it did not happen.
    if (!isRanInPart(err)) takeBack(ws.ledger, row);
    throw err;
  }
  if (outcome.handles && !outcome.ran && !handed) setLaunchHandles(ws.ledger, row.id, outcome.handles);
  let unrecorded = false;
  if (outcome.ran) {
    try {
      refresh(ws.ledger, job.id);
    } catch (err) {
      // Stopped by the user: that is the answer, even when the ledger cannot take the records now (a full disk).
      if (!outcome.ran.interrupted) throw err;
      report(
        `drover: ${toDroverError(ledgerError(err) ?? (isSystemError(err) ? ioError(err) : err)).message}`,
      );
      unrecorded = true;
    }
  }
  return {
    jobname: job.name,
    backend: spec.backend,
    launch: getLaunch(ws.ledger, row.id) ?? row,
    tasklist: row.tasklist,
    count: row.task_count,
    outcome,
    ...(unrecorded ? { unrecorded } : {}),
  };
}

/** What a dry run needs besides the spec. */
interface DryRunContext {
  request: LaunchPlan['request'];
  retries: number;
  config: Record<string, string>;
  drover: LaunchContext['drover'];
}

/**
 * A plan's ways to its tasks. Made here, out of the launch's scope, so that the closures hold only the compact
 * selection and not the arrays of ids the launch was made from: a plan lives as long as its tasks run (a
 * million-task local launch held two arrays of its ids, 21 MB, for its whole life).
 */
function taskSource(
  ledger: Ledger,
  jobId: number,
  taskIds: readonly number[],
): Pick<LaunchPlan, 'tasks' | 'eachTask'> {
  const selection = taskSelection(taskIds);
  return {
    tasks: () => launchTasks(ledger, jobId, selection),
    eachTask: () => iterateLaunchTasks(ledger, jobId, selection),
  };
}

/**
 * A dry run: what the launch would run, from the same plan a launch uses (for clusters, the scheduler commands),
 * with nothing written but the history. A `--command` job is not made: its one task (or its ranks) is shown.
 */
async function dryRun(
  ws: Workspace,
  spec: LaunchSpec,
  backend: Backend,
  made: () => { job: JobRow; ids: number[] | undefined },
  c: DryRunContext,
): Promise<LaunchResult> {
  let job: JobRow;
  let tasks: () => LaunchTask[];
  let count: number;
  if (spec.command !== undefined) {
    const name = spec.jobname ?? 'command-<time>';
    count = spec.numJobs ?? 1;
    job = {
      id: 0,
      name,
      created_at: 0,
      task_count: count,
      max_task: count,
      jobfile: '',
      jobfile_stamp: null,
      generation: 0,
    };
    tasks = () =>
      spec.numJobs === undefined ? [{ id: 1, command: spec.command!, tag: '', attempt: 1 }] : [];
  } else {
    const sel = made();
    job = sel.job;
    const ids = sel.ids ?? [];
    count = ids.length;
    tasks = () => launchTasks(ws.ledger, job.id, ids);
  }
  recordHistory(ws.ledger, {
    kind: 'launch',
    ...((spec.jobname ?? spec.command === undefined) ? { jobname: job.name } : {}),
    argv: spec.argv,
    dryRun: true,
  });
  const list = spec.numJobs !== undefined ? `1-${count}` : condenseIds(tasks().map((t) => t.id));
  const base = { jobname: job.name, backend: spec.backend, launch: null, tasklist: list, count };
  if (count === 0) return base;
  const dir = path.join(path.dirname(ws.paths.launchDir(job.name, 1)), NEXT_LAUNCH);
  const settings = runSettings(ws, spec, job, 0, dir, c.retries, c.config);
  const plan: LaunchPlan = {
    ledger: ws.ledger,
    paths: ws.paths,
    backend: spec.backend,
    job,
    dir,
    tasklist: list,
    count,
    tasks,
    eachTask: tasks,
    settings,
    request: c.request,
    config: c.config,
    drover: c.drover,
    detach: false,
    ...(spec.numJobs !== undefined ? { numJobs: spec.numJobs } : {}),
  };
  const outcome = await backend.launch(plan, 'dry-run');
  return { ...base, outcome, ...(backend.traits.taskRows === 'eager' ? { tasks: tasks() } : {}) };
}

/** The launch number in the paths a dry run shows (a launch gets its number when it is made). */
export const NEXT_LAUNCH = '<N>';
