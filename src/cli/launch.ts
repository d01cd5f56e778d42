import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import type { LaunchRequest } from '../backends/backend.js';
import { shellQuote } from '../backends/cluster/wrapper.js';
import { stopEarlierAttempts } from '../backends/local/rerun.js';
import { thisProcessHandles } from '../backends/local/submit.js';
import { launchOnPool, type PoolLaunchOptions } from '../backends/pool/launch.js';
import { refresh } from '../backends/refresh.js';
import { backendFor } from '../backends/registry.js';
import { type BackendName, backendConfig, BACKENDS as CONFIG_BACKENDS } from '../config/config.js';
import { usageError } from '../errors.js';
import { loadJob } from '../launch/load-job.js';
import { checkSelection, selectTasks } from '../launch/select.js';
import { recordHistory } from '../ledger/history.js';
import { type JobRow, jobNotFound } from '../ledger/jobs.js';
import { createLaunch, launchTasks, refuseActive, setLaunchHandles } from '../ledger/launches.js';
import type { RunSettings } from '../runner/group.js';
import { parseVisibleGpus, planSlots } from '../runner/slots.js';
import { serializeJobfile, validateJobname, writeJobfileAtomic } from '../sweep/index.js';
import { condenseIds, parseBlocks } from '../tasklist/tasklist.js';
import { parseInteger } from '../util/integer.js';
import { COUNTS, SECONDS } from '../util/limits.js';
import { launchCluster } from './launch-cluster.js';
import { launchLocal } from './launch-local.js';
import { note, printJson } from './output.js';
import { durationOption, intOption, sizeOption } from './parse.js';
import { openExistingWorkspace, openWorkspace, type Workspace } from './workspace.js';

/** The backends `--backend` accepts. */
export const LAUNCH_BACKENDS = ['local', 'slurm', 'gridengine'] as const;

/** Options of `drover launch`, as commander parses them. */
export interface LaunchOptions {
  backend: string;
  jobname?: string;
  command?: string;
  jobfile?: string;
  tasklist?: string;
  failed?: boolean;
  unfinished?: boolean;
  cpus?: number;
  gpus?: number;
  gpusPerTask?: number;
  /** MiB (util/size.ts). */
  mem?: number;
  /** Seconds. */
  duration?: number;
  /** Seconds. */
  taskTimeout?: number;
  maxTasks?: number;
  tasksPerNode?: number;
  maxTasksPerNode?: number;
  partition?: string;
  account?: string;
  qos?: string;
  after?: string;
  /** Undefined when not given: the config's `retries`, else 0. */
  retries?: number;
  retryDelay: number;
  killGrace: number;
  venv?: string;
  dryRun?: boolean;
  detach?: boolean;
  json?: boolean;
  quiet?: boolean;
}

/** Register `drover launch`. */
export function registerLaunch(program: Command): void {
  program
    .command('launch')
    .description('run a job’s tasks (all, a tasklist, --failed or --unfinished) on a backend')
    .usage('[options] [-- scheduler arguments]')
    .option('--backend <name>', `where to run: ${LAUNCH_BACKENDS.join(', ')}`, 'local')
    .option('--pool <name>', 'run on this pool of workers (drover pool create; needs drover server)')
    .option(
      '--num-jobs <n>',
      'with --pool and --command: run it n times (DROVER_JOB_RANK 0..n-1, DROVER_NUM_JOBS)',
      intOption('--num-jobs', COUNTS.tasks),
    )
    .option('--follow', 'with --pool: show live progress until the launch is done')
    .option('--jobname <name>', 'the job to launch (made by drover prelaunch)')
    .option('--command <cmd>', 'launch a single command as a one-task job (named by --jobname or the time)')
    .option(
      '--jobfile <path>',
      'read the job’s tasks from this jobfile instead of .drover/jobs/<job>/jobs.json',
    )
    .option('--tasklist <list>', 'only these tasks, e.g. 1-3,5,8-9 or 1-100:2')
    .option('--failed', 'only tasks whose latest attempt failed, was killed, timed out, was lost or errored')
    .option('--unfinished', 'every task that has not succeeded and is not queued or running now')
    .option(
      '--cpus <n>',
      'CPUs per task (local: slots = CPUs available / n)',
      intOption('--cpus', COUNTS.cpus),
    )
    .option(
      '--gpus <n>',
      'GPUs per task, pinned per slot from CUDA_VISIBLE_DEVICES',
      intOption('--gpus', COUNTS.gpus),
    )
    .option('--gpus-per-task <n>', 'same as --gpus', intOption('--gpus-per-task', COUNTS.gpus))
    .option(
      '--mem <size>',
      'memory (clusters: per array element), e.g. 500M, 4G (a bare number is G)',
      sizeOption('--mem'),
    )
    .option(
      '--duration <time>',
      'time limit (clusters: per array element; local: per task), e.g. 90s, 10m, 1:00:00',
      durationOption('--duration', SECONDS.limit),
    )
    .option(
      '--task-timeout <time>',
      'time limit of each task attempt; it ends as timeout',
      durationOption('--task-timeout', SECONDS.limit),
    )
    .option(
      '--max-tasks <n>',
      'tasks (clusters: array elements) running at once',
      intOption('--max-tasks', COUNTS.tasks),
    )
    .option(
      '--tasks-per-node <n>',
      'clusters: pack n tasks into each array element',
      intOption('--tasks-per-node', COUNTS.tasks),
    )
    .option(
      '--max-tasks-per-node <n>',
      'clusters: tasks at once in each packed element',
      intOption('--max-tasks-per-node', COUNTS.tasks),
    )
    .option('--partition <name>', 'Slurm partition (default: the cluster’s default, or config)')
    .option('--account <name>', 'Slurm account')
    .option('--qos <name>', 'Slurm QOS')
    .option('--after <jobid>', 'clusters: start after this scheduler job id ended well')
    .option(
      '--retries <n>',
      'retry a failed, killed or timed-out task up to n times (default: config retries, else 0)',
      intOption('--retries', COUNTS.retries),
    )
    .option(
      '--retry-delay <s>',
      'seconds before the first retry; doubles each retry, max 60 s, ±20%',
      durationOption('--retry-delay', SECONDS.retryDelay),
      1,
    )
    .option(
      '--kill-grace <s>',
      'seconds between SIGTERM and SIGKILL when stopping a task',
      durationOption('--kill-grace', SECONDS.killGrace),
      5,
    )
    .option('--venv <path>', 'activate this Python virtualenv for each task')
    .option(
      '--dry-run',
      'show what would run (on a cluster: the sbatch/qsub commands, as the launch would run them) and record nothing but the history',
    )
    .option('--detach', 'local: run in the background and return at once')
    .option('--json', 'print the launch (and, in the foreground, its final counts) as JSON')
    .option('-q, --quiet', 'no progress display')
    .allowExcessArguments()
    .action(async (opts: LaunchOptions & PoolLaunchOptions, cmd: Command) => {
      if (opts.pool !== undefined) {
        process.exitCode = await launchOnPool(opts, cmd.args, process.argv.slice(2));
        return;
      }
      if (opts.numJobs !== undefined || opts.follow)
        throw usageError('--num-jobs and --follow are for --pool launches');
      process.exitCode = await launch(opts, cmd.args, process.argv.slice(2));
    });
}

function checkOptions(opts: LaunchOptions, extraArgs: string[]): void {
  if (!(LAUNCH_BACKENDS as readonly string[]).includes(opts.backend)) {
    throw usageError(`--backend '${opts.backend}' is not a backend: use ${LAUNCH_BACKENDS.join(', ')}`);
  }
  if (opts.jobname !== undefined) validateJobname(opts.jobname, '--jobname');
  if (opts.jobname === undefined && opts.command === undefined) {
    throw usageError('launch needs --jobname JOB or --command CMD');
  }
  if (opts.tasklist !== undefined) parseBlocks(opts.tasklist);
  if (opts.command !== undefined && opts.command.trim() === '') {
    throw usageError("--command '' is empty: give the command to run");
  }
  checkSelection(opts);
  if (opts.command !== undefined && (opts.tasklist || opts.failed || opts.unfinished) && !opts.jobname) {
    throw usageError('--tasklist, --failed and --unfinished need --jobname');
  }
  if (opts.gpus !== undefined && opts.gpusPerTask !== undefined && opts.gpus !== opts.gpusPerTask) {
    throw usageError(`--gpus ${opts.gpus} and --gpus-per-task ${opts.gpusPerTask} disagree: give one`);
  }
  if (opts.detach && opts.dryRun) throw usageError('--detach and --dry-run together do nothing: drop one');
  if (opts.backend === 'local') {
    if (extraArgs.length > 0)
      throw usageError(
        `'${extraArgs[0]}': arguments after -- are for cluster schedulers, not --backend local`,
      );
    for (const [flag, v] of [
      ['--tasks-per-node', opts.tasksPerNode],
      ['--max-tasks-per-node', opts.maxTasksPerNode],
      ['--partition', opts.partition],
      ['--account', opts.account],
      ['--qos', opts.qos],
      ['--after', opts.after],
    ] as const) {
      if (v !== undefined) throw usageError(`${flag} is for cluster backends: drop it for --backend local`);
    }
  } else if (opts.detach) {
    throw usageError(
      `--detach is for --backend local: ${opts.backend} launches always return once submitted`,
    );
  }
}

/**
 * `--dry-run`: say what would run — for a cluster backend the scheduler commands too, exactly as a launch
 * would run them — and record nothing but the history.
 */
function dryRun(
  ws: Workspace,
  job: JobRow,
  backend: BackendName,
  ids: readonly number[],
  request: LaunchRequest,
  config: Record<string, string>,
  argv: readonly string[],
  json: boolean,
): number {
  const tasks = launchTasks(ws.ledger, job.id, ids);
  const preview = backendFor(backend).preview?.({
    job: job.name,
    tasks,
    request,
    config,
    dir: path.join(path.dirname(ws.paths.launchDir(job.name, 1)), NEXT_LAUNCH),
  });
  recordHistory(ws.ledger, { kind: 'launch', jobname: job.name, argv, dryRun: true });
  if (json) {
    printJson({
      jobname: job.name,
      launch: null,
      backend,
      dry_run: true,
      tasks: ids.length,
      tasklist: condenseIds(ids),
      submissions: preview?.commands ?? [],
      warnings: preview?.warnings ?? [],
    });
    return 0;
  }
  note(`would launch ${ids.length} task(s) of job '${job.name}' on ${backend}: tasklist ${condenseIds(ids)}`);
  if (preview) {
    for (const w of preview.warnings) note(`drover: warning: ${w}`);
    note(`with ${preview.commands.length} submission(s) (${NEXT_LAUNCH} is the launch's number):`);
    for (const c of preview.commands) note(`  ${c.map(displayArg).join(' ')}`);
  }
  process.stdout.write(tasks.map((t) => `${t.id}\t${t.command}\n`).join(''));
  return 0;
}

/** The launch number in the paths a dry run shows (a launch gets its number when it is made). */
const NEXT_LAUNCH = '<N>';

/** An argument as a shell would need it typed: bare when safe, else single-quoted. */
function displayArg(a: string): string {
  return /^[\w@%+=:,./-]+$/.test(a.replaceAll(NEXT_LAUNCH, 'N')) ? a : shellQuote(a);
}

/** Make the one-task job of `--command`; refuses to overwrite a job with other tasks. */
function commandJob(ws: Workspace, opts: LaunchOptions): string {
  const text = serializeJobfile(new Map([[1, { command: opts.command!, tag: '' }]]));
  if (opts.jobname === undefined) return newCommandJob(ws, text);
  const name = validateJobname(opts.jobname, '--jobname');
  const file = ws.paths.jobfile(name);
  if (fs.existsSync(file)) {
    if (fs.readFileSync(file, 'utf8') === text) return name;
    throw usageError(`job '${name}' already exists with other tasks: pick another --jobname for --command`);
  }
  writeJobfileAtomic(file, text);
  return name;
}

/**
 * A new job named by the time (`command-20261201-080834`, then `-2`, `-3`... within the same second): the job's
 * folder is made with an exclusive mkdir, so concurrent launches never share a name.
 */
function newCommandJob(ws: Workspace, text: string): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  fs.mkdirSync(path.dirname(ws.paths.jobDir('x')), { recursive: true });
  for (let n = 1; ; n++) {
    const name = n === 1 ? `command-${stamp}` : `command-${stamp}-${n}`;
    try {
      fs.mkdirSync(ws.paths.jobDir(name));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') continue;
      throw err;
    }
    writeJobfileAtomic(ws.paths.jobfile(name), text);
    return name;
  }
}

async function launch(opts: LaunchOptions, extraArgs: string[], argv: readonly string[]): Promise<number> {
  checkOptions(opts, extraArgs);
  const backend = opts.backend as BackendName;
  const duration = opts.duration;
  const taskTimeout = opts.taskTimeout ?? (opts.backend === 'local' ? duration : undefined);
  if (opts.venv !== undefined && !fs.existsSync(path.join(opts.venv, 'bin'))) {
    throw usageError(`--venv '${opts.venv}' has no bin/ folder: give the path of a virtualenv`);
  }
  if (backend === 'local' && (opts.gpusPerTask ?? opts.gpus) !== undefined) {
    // Checked now, before anything is written: the runner would refuse the same way.
    const k = (opts.gpusPerTask ?? opts.gpus)!;
    planSlots(
      { cpusAvailable: 1, gpusPerTask: k, visibleGpus: parseVisibleGpus(process.env.CUDA_VISIBLE_DEVICES) },
      opts.gpus !== undefined ? '--gpus' : '--gpus-per-task',
    );
  }
  // A launch of a job this folder does not have creates nothing (not even .drover/).
  if (opts.command === undefined && opts.jobfile === undefined && !openExistingWorkspace())
    throw jobNotFound(opts.jobname!);
  const ws = openWorkspace();
  const config = CONFIG_BACKENDS.includes(backend) ? backendConfig(ws.paths.localConfig, backend) : {};
  const maxTasks =
    opts.maxTasks ??
    (config.max_tasks
      ? parseInteger(config.max_tasks, 'max_tasks in drover config', COUNTS.tasks)
      : undefined);
  const retries =
    opts.retries ??
    (config.retries ? parseInteger(config.retries, 'retries in drover config', COUNTS.retries) : 0);
  if (opts.command !== undefined && opts.dryRun) {
    note(`would run 1 task on ${backend}: ${opts.command}`);
    recordHistory(ws.ledger, {
      kind: 'launch',
      argv,
      dryRun: true,
      ...(opts.jobname ? { jobname: opts.jobname } : {}),
    });
    return 0;
  }
  const jobname = opts.command !== undefined ? commandJob(ws, opts) : opts.jobname!;
  const job = loadJob(ws, jobname, {
    ...(opts.jobfile !== undefined ? { jobfile: opts.jobfile } : {}),
    report: note,
  });
  // Fresh states: --failed/--unfinished select by them, and attempt numbers continue from what was recorded.
  refresh(ws.ledger, job.id);
  const ids = selectTasks(ws.ledger, job, opts);
  refuseActive(ws.ledger, job, ids);
  if (ids.length === 0) {
    const what = opts.failed ? 'no failed tasks' : opts.unfinished ? 'no unfinished tasks' : 'no tasks';
    note(`drover: nothing to launch: job '${jobname}' has ${what}`);
    if (opts.json) printJson({ jobname, launch: null, tasks: 0 });
    return 0;
  }
  const request: LaunchRequest = {
    ...(opts.cpus !== undefined ? { cpus: opts.cpus } : {}),
    ...((opts.gpusPerTask ?? opts.gpus) !== undefined ? { gpus: opts.gpusPerTask ?? opts.gpus } : {}),
    ...(opts.mem !== undefined ? { memMb: opts.mem } : {}),
    ...(duration !== undefined ? { duration } : {}),
    ...(maxTasks !== undefined ? { maxTasks } : {}),
    tasksPerNode: opts.tasksPerNode ?? 1,
    ...(opts.maxTasksPerNode !== undefined ? { maxTasksPerNode: opts.maxTasksPerNode } : {}),
    ...((opts.partition ?? config.partition) ? { partition: opts.partition ?? config.partition } : {}),
    ...((opts.account ?? config.account) ? { account: opts.account ?? config.account } : {}),
    ...((opts.qos ?? config.qos) ? { qos: opts.qos ?? config.qos } : {}),
    ...(opts.after !== undefined ? { after: opts.after } : {}),
    extraArgs,
  };
  if (opts.dryRun) return dryRun(ws, job, backend, ids, request, config, argv, opts.json === true);
  const stopped = stopEarlierAttempts(ws.ledger, job, ids);
  if (stopped) note(stopped);
  const { launch, tasks } = ws.ledger.write(() => {
    const made = createLaunch(
      ws.ledger,
      job,
      backend,
      ids,
      {
        ...request,
        retries,
        retryDelay: opts.retryDelay,
        taskTimeout,
        detach: opts.detach === true,
      },
      (id) => ws.paths.launchDir(jobname, id),
    );
    // Until it hands the launch to a runner, this process is its runner: a launch is never without one to check.
    if (backend === 'local') setLaunchHandles(ws.ledger, made.launch.id, thisProcessHandles());
    return made;
  });
  recordHistory(ws.ledger, { kind: 'launch', jobname, argv, launchId: launch.id });
  fs.mkdirSync(launch.dir, { recursive: true });
  const venv = opts.venv ?? config.venv;
  const settings: RunSettings = {
    v: 1,
    job: jobname,
    launch: launch.id,
    retries,
    retryDelay: opts.retryDelay,
    ...(taskTimeout !== undefined ? { taskTimeout } : {}),
    killGrace: opts.killGrace,
    logDir: ws.paths.logDir(jobname, launch.id),
    recordsDir: path.join(launch.dir, 'records'),
    cancelDir: path.join(launch.dir, 'cancel'),
    ...(venv ? { venv: path.resolve(venv) } : {}),
    cwd: process.cwd(),
  };
  if (backend === 'local') {
    return launchLocal({ ws, job, launch, tasks, settings, config, request, opts });
  }
  return launchCluster({ ws, job, launch, tasks, settings, config, request, opts });
}
