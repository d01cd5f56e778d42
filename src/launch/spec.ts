import fs from 'node:fs';
import path from 'node:path';
import type { Backend, BackendOption, LaunchRequest } from '../backends/backend.js';
import { usageError } from '../errors.js';
import { backendFlag, poolOf } from '../protocol/backend-ref.js';
import type { LogsMode } from '../runner/group.js';
import { elementMargin } from '../runner/restart.js';
import { validateJobname } from '../sweep/index.js';
import { parseBlocks } from '../tasklist/tasklist.js';
import { checkWarnSignal, parseWarnSignal, type WarnSignal } from '../util/warn-signal.js';
import { checkSelection } from './select.js';

/**
 * One launch as asked for, by the CLI's flags or the controller's API: what to run, which of its tasks, where,
 * and how. The one input of src/launch/launch.ts.
 */
export interface LaunchSpec {
  /** `local`, `slurm`, `gridengine`, or `pool:NAME`. */
  backend: string;
  /** The job (made by prelaunch); with `command`, the name of the new job (default: made from the time). */
  jobname?: string;
  /** Launch this one command as a new job (or `numJobs` ranks of it, on a pool). */
  command?: string;
  /** With `command`: run it this many times, with DROVER_JOB_RANK 0..n-1 (pools). */
  numJobs?: number;
  /** Read the job's tasks from this jobfile instead of the one the ledger knows. */
  jobfile?: string;
  tasklist?: string;
  failed?: boolean;
  unfinished?: boolean;
  /** Resources and scheduler options. */
  request: LaunchRequest;
  /** Retries of a failed, killed or timed-out attempt; undefined: the config's `retries`, else 0. */
  retries?: number;
  /** Seconds before the first retry. */
  retryDelay: number;
  /** Per-attempt time limit in seconds (local: `--duration` too). */
  taskTimeout?: number;
  /** Seconds between SIGTERM and SIGKILL. */
  killGrace: number;
  /** `--signal SIG@TIME`: each task gets SIG this many seconds before its time limit. */
  signal?: WarnSignal;
  /**
   * `--requeue N`: a task that hit its time limit or exited `requeueExit` (it checkpointed) runs again, resumed
   * (DROVER_RESUME=1), up to N times, apart from its retries; undefined: 0.
   */
  requeue?: number;
  /** `--requeue-exit`: the exit code by which a task asks to be requeued; undefined: 75 (runner/reasons.ts). */
  requeueExit?: number;
  /** A virtualenv activated for each task (absolute). */
  venv?: string;
  /** Extra environment of every task. */
  env?: Record<string, string>;
  /** Working folder of the tasks (absolute). */
  cwd: string;
  /** Local: run in the background. */
  detach?: boolean;
  /**
   * Where `drover results` finds each attempt's result: `file` (what the task wrote to DROVER_RESULT_FILE, the
   * default) or `stdout` (the last line of its stdout that is a JSON object). Kept with the launch.
   */
  result?: ResultSource;
  /** How tasks' output is kept (`--logs`); the backend's default when omitted. */
  logs?: LogsMode;
  dryRun?: boolean;
  /** The command line, for `drover history`. */
  argv: readonly string[];
}

/** The defaults of `drover launch`'s options that every spec carries: the CLI's, the pool API's, the dashboard's. */
export const LAUNCH_DEFAULTS = { retryDelay: 1, killGrace: 5, tasksPerNode: 1 } as const;

/**
 * `drover launch JOB --failed` on `backend` with the settings of the job's latest launch (`previous`, its
 * `options` JSON as the ledger keeps it): the dashboard's rerun, which reruns exactly what ran — resources, time
 * limits, retries, `--signal`, `--requeue`, where results come from — but never an `--after` (that job is past).
 * Settings it cannot read are left at their defaults. A local rerun runs detached (it outlives the request).
 */
export function failedRerunSpec(
  jobname: string,
  backend: string,
  cwd: string,
  argv: readonly string[],
  previous?: string,
): LaunchSpec {
  const before = previousSettings(previous);
  return {
    backend,
    jobname,
    failed: true,
    retryDelay: LAUNCH_DEFAULTS.retryDelay,
    killGrace: LAUNCH_DEFAULTS.killGrace,
    ...before,
    request: { tasksPerNode: LAUNCH_DEFAULTS.tasksPerNode, extraArgs: [], ...before.request },
    cwd,
    ...(backend === 'local' ? { detach: true } : {}),
    argv,
  };
}

/** What a launch's `options` (launch.ts) say of the settings a rerun carries over; nothing when unreadable. */
function previousSettings(options: string | undefined): Partial<LaunchSpec> {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(options ?? '{}') as Record<string, unknown>;
    if (typeof o !== 'object' || o === null || Array.isArray(o)) return {};
  } catch {
    return {};
  }
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  const request: Partial<LaunchRequest> = {};
  for (const k of [
    'cpus',
    'gpus',
    'memMb',
    'duration',
    'maxTasks',
    'tasksPerNode',
    'maxTasksPerNode',
  ] as const) {
    const v = num(o[k]);
    if (v !== undefined) request[k] = v;
  }
  for (const k of ['partition', 'account', 'qos'] as const) {
    const v = str(o[k]);
    if (v !== undefined) request[k] = v;
  }
  if (Array.isArray(o.extraArgs) && o.extraArgs.every((a) => typeof a === 'string'))
    request.extraArgs = o.extraArgs as string[];
  const signal = str(o.signal);
  let warn: WarnSignal | undefined;
  try {
    warn = signal !== undefined ? parseWarnSignal(signal) : undefined;
  } catch {
    warn = undefined;
  }
  const pick = <K extends keyof LaunchSpec>(k: K, v: LaunchSpec[K] | undefined) =>
    v !== undefined ? ({ [k]: v } as Partial<LaunchSpec>) : {};
  return {
    request: request as LaunchRequest,
    ...pick('retries', num(o.retries)),
    ...pick('retryDelay', num(o.retryDelay)),
    ...pick('taskTimeout', num(o.taskTimeout)),
    ...pick('killGrace', num(o.killGrace)),
    ...pick('signal', warn),
    ...pick('requeue', num(o.requeue)),
    ...pick('requeueExit', num(o.requeueExit)),
    ...pick('result', o.result === 'file' || o.result === 'stdout' ? o.result : undefined),
  };
}

/** Where a launch's attempts leave their results (see LaunchSpec.result). */
export type ResultSource = 'file' | 'stdout';

/** The values `--result` takes. */
export const RESULT_SOURCES: readonly ResultSource[] = ['file', 'stdout'];

/** The flag of each backend option, as the user typed it. */
const FLAGS: Record<BackendOption, string> = {
  maxTasks: '--max-tasks',
  duration: '--duration',
  tasksPerNode: '--tasks-per-node',
  maxTasksPerNode: '--max-tasks-per-node',
  partition: '--partition',
  account: '--account',
  qos: '--qos',
  after: '--after',
  extraArgs: 'arguments after --',
  detach: '--detach',
  numJobs: '--num-jobs',
};

/** The backend options a spec uses. */
function usedOptions(spec: LaunchSpec): BackendOption[] {
  const r = spec.request;
  const used: [BackendOption, boolean][] = [
    ['maxTasks', r.maxTasks !== undefined],
    ['duration', r.duration !== undefined],
    ['tasksPerNode', r.tasksPerNode > 1],
    ['maxTasksPerNode', r.maxTasksPerNode !== undefined],
    ['partition', r.partition !== undefined],
    ['account', r.account !== undefined],
    ['qos', r.qos !== undefined],
    ['after', r.after !== undefined],
    ['extraArgs', r.extraArgs.length > 0],
    ['detach', spec.detach === true],
    ['numJobs', spec.numJobs !== undefined],
  ];
  return used.filter(([, u]) => u).map(([o]) => o);
}

/** Where a spec runs, as the user said it: `--backend local`, `--pool p`. */
export function where(spec: Pick<LaunchSpec, 'backend'>): string {
  return backendFlag(spec.backend);
}

/** A spec that checkSpec passed: launch() does not check it again. */
export type CheckedSpec = LaunchSpec & { readonly [CHECKED]: true };
const CHECKED: unique symbol = Symbol('checked launch spec');

/** True for a spec checkSpec returned (a copy, or one that crossed the wire, is not). */
export function isChecked(spec: LaunchSpec): spec is CheckedSpec {
  return (spec as Partial<CheckedSpec>)[CHECKED] === true;
}

/**
 * Check a launch before anything is read or written: each rule once, for every backend and for the API. Bad
 * specs are usage errors (exit 2) naming the value and what to do. Returns the spec, marked checked.
 */
export function checkSpec(spec: LaunchSpec, backend: Backend): CheckedSpec {
  if (spec.jobname !== undefined) validateJobname(spec.jobname, '--jobname');
  if (spec.jobname === undefined && spec.command === undefined) {
    throw usageError('launch needs --jobname JOB or --command CMD');
  }
  if (spec.command !== undefined && spec.command.trim() === '') {
    throw usageError("--command '' is empty: give the command to run");
  }
  if (spec.tasklist !== undefined) parseBlocks(spec.tasklist);
  checkSelection(spec);
  const selects = spec.tasklist !== undefined || spec.failed || spec.unfinished;
  if (spec.command !== undefined && selects && (spec.jobname === undefined || spec.numJobs !== undefined)) {
    throw usageError(
      '--command makes a new job: --tasklist, --failed and --unfinished are for --jobname JOB',
    );
  }
  if (spec.numJobs !== undefined && spec.command === undefined)
    throw usageError('--num-jobs needs --command CMD');
  if (spec.result !== undefined && !RESULT_SOURCES.includes(spec.result)) {
    throw usageError(
      `--result ${JSON.stringify(spec.result)} is not a result source: use --result file (DROVER_RESULT_FILE, the default) or --result stdout`,
    );
  }
  if (spec.logs !== undefined && !(backend.traits.logs as readonly string[]).includes(spec.logs)) {
    const known = spec.logs === 'files' || spec.logs === 'segments';
    throw usageError(
      known
        ? `--logs ${spec.logs}: the ${backend.name} backend keeps ${backend.traits.logs.join(' or ')} only: drop --logs`
        : `--logs ${JSON.stringify(spec.logs)} is not a way to keep logs: use --logs segments (a few files per runner slot) or --logs files (two per task); ${backend.name} launches keep ${backend.traits.logs[0]} unless told`,
    );
  }
  if (spec.detach && spec.dryRun) throw usageError('--detach and --dry-run together do nothing: drop one');
  for (const option of usedOptions(spec)) {
    if (backend.traits.options.has(option)) continue;
    const flag = option === 'extraArgs' ? `'${spec.request.extraArgs[0]}' (after --)` : FLAGS[option];
    const hint = option === 'duration' ? ', use --task-timeout for each task' : '';
    throw usageError(`${flag} does not apply to ${where(spec)} (${backend.traits.refusal}${hint}): drop it`);
  }
  if (spec.venv !== undefined && !fs.existsSync(path.join(spec.venv, 'bin'))) {
    throw usageError(`--venv '${spec.venv}' has no bin/ folder: give the path of a virtualenv`);
  }
  if (!path.isAbsolute(spec.cwd)) throw usageError(`cwd '${spec.cwd}' must be an absolute path`);
  if (spec.signal !== undefined) checkSignalLimit(spec, spec.signal);
  checkRequeue(spec);
  backend.check?.(spec.request, spec.detach === true);
  return Object.assign(spec, { [CHECKED]: true as const });
}

/**
 * `--requeue` runs a task again where its runner ended it: at its own time limit (`--task-timeout`; `--duration`
 * on local), or when it exits `--requeue-exit`; on a cluster also at its element's `--duration`, in the
 * element's next run; on a pool its controller decides, from the worker's records.
 */
function checkRequeue(spec: LaunchSpec): void {
  const n = spec.requeue ?? 0;
  if (n === 0) {
    if (spec.requeueExit !== undefined)
      throw usageError(
        `--requeue-exit ${spec.requeueExit} does nothing without --requeue N: add --requeue 1 or more`,
      );
    return;
  }
  // A cluster element's --duration counts: its runner stops before it and the element runs again.
  const perTask =
    spec.taskTimeout !== undefined ||
    (poolOf(spec.backend) === undefined && spec.request.duration !== undefined);
  if (!perTask)
    throw usageError(
      `--requeue ${n} needs a time limit to requeue at: add --task-timeout TIME${poolOf(spec.backend) !== undefined ? '' : ' or --duration TIME'}`,
    );
  const duration = spec.request.duration;
  const margin = elementMargin(spec);
  if (
    spec.backend !== 'local' &&
    spec.taskTimeout === undefined &&
    duration !== undefined &&
    duration < 2 * margin
  )
    throw usageError(
      `--requeue ${n} with --duration ${duration}s: each run of an element stops its tasks ${margin} s before its limit (--kill-grace + 10 s), so give --duration ${2 * margin}s or more, or a --task-timeout`,
    );
}

/**
 * `--signal` warns before a time limit: the shortest one a task has (`--task-timeout`, and `--duration`: per task
 * on local, per element on clusters; a pool's tasks have only their own), which the time must be below.
 */
function checkSignalLimit(spec: LaunchSpec, signal: WarnSignal): void {
  const pool = poolOf(spec.backend) !== undefined;
  const limits: [number, string][] = [];
  if (spec.taskTimeout !== undefined) limits.push([spec.taskTimeout, '--task-timeout']);
  // A local launch's --duration is each task's limit only when --task-timeout is not given (launch.ts).
  const duration = spec.request.duration;
  if (duration !== undefined && !pool && !(spec.backend === 'local' && spec.taskTimeout !== undefined))
    limits.push([duration, '--duration']);
  const shortest = limits.reduce<[number, string] | undefined>(
    (m, l) => (m && m[0] <= l[0] ? m : l),
    undefined,
  );
  checkWarnSignal(
    signal,
    shortest?.[0],
    shortest?.[1] ?? '',
    pool ? '--task-timeout' : '--task-timeout or --duration',
  );
}
