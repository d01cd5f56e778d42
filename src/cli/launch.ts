import path from 'node:path';
import type { Command } from 'commander';
import { LAUNCH_BACKENDS, launchBackend } from '../backends/registry.js';
import { usageError } from '../errors.js';
import { launch } from '../launch/launch.js';
import { checkSpec, LAUNCH_DEFAULTS, type LaunchSpec } from '../launch/spec.js';
import { jobNotFound } from '../ledger/jobs.js';
import { taskLabeler } from '../ledger/queries.js';
import { poolOf, poolRef } from '../protocol/backend-ref.js';
import { COUNTS, SECONDS } from '../util/limits.js';
import { localAfter } from './after-background.js';
import { envOption } from './env-option.js';
import { launchOnPool } from './follow.js';
import { splitOperands } from './operands.js';
import { note } from './output.js';
import { durationOption, intOption, signalOption, sizeOption } from './parse.js';
import { Progress } from './progress.js';
import { self } from './self.js';
import { reportLaunch } from './summary.js';
import { cellText } from './table.js';
import { watch } from './watch.js';
import { openExistingWorkspace, openWorkspace } from './workspace.js';

/** Options of `drover launch`, as commander parses them (see registerLaunch for each one's meaning). */
type Flags = Record<string, string | number | boolean | undefined>;

const OPTIONS: [string, string, ((v: string, previous: never) => unknown)?, unknown?][] = [
  ['--backend <name>', `where to run: ${LAUNCH_BACKENDS.join(', ')}`, undefined, 'local'],
  ['--pool <name>', 'run on this pool of workers (drover pool create; needs drover server)'],
  [
    '--num-jobs <n>',
    'with --pool and --command: run it n times (DROVER_JOB_RANK 0..n-1, DROVER_NUM_JOBS)',
    intOption('--num-jobs', COUNTS.tasks),
  ],
  [
    '--follow',
    'show live progress until the launch is done, on any backend (as drover watch; Ctrl-C stops following, not the launch)',
  ],
  ['--jobname <name>', 'the job to launch (made by drover prelaunch)'],
  ['--command <cmd>', 'launch a single command as a one-task job (named by --jobname or the time)'],
  ['--jobfile <path>', 'read the job’s tasks from this jobfile instead of .drover/jobs/<job>/jobs.json'],
  ['--tasklist <list>', 'only these tasks, e.g. 1-3,5,8-9 or 1-100:2'],
  ['--failed', 'only tasks whose latest attempt failed, was killed, timed out, was lost or errored'],
  ['--unfinished', 'every task that has not succeeded and is not queued or running now'],
  ['--cpus <n>', 'CPUs per task (local: slots = CPUs available / n)', intOption('--cpus', COUNTS.cpus)],
  [
    '--gpus <n>',
    'GPUs per task, pinned per slot from CUDA_VISIBLE_DEVICES',
    intOption('--gpus', COUNTS.gpus),
  ],
  ['--gpus-per-task <n>', 'same as --gpus', intOption('--gpus-per-task', COUNTS.gpus)],
  [
    '--mem <size>',
    'memory (clusters: per array element), e.g. 500M, 4G (a bare number is G)',
    sizeOption('--mem'),
  ],
  [
    '--duration <time>',
    'time limit (clusters: per array element; local: per task), e.g. 90s, 10m, 1:00:00',
    durationOption('--duration', SECONDS.limit),
  ],
  [
    '--task-timeout <time>',
    'time limit of each task attempt; it ends as timeout',
    durationOption('--task-timeout', SECONDS.limit),
  ],
  [
    '--max-tasks <n>',
    'tasks (clusters: array elements) running at once',
    intOption('--max-tasks', COUNTS.tasks),
  ],
  [
    '--tasks-per-node <n>',
    'clusters: pack n tasks into each array element',
    intOption('--tasks-per-node', COUNTS.tasks),
  ],
  [
    '--max-tasks-per-node <n>',
    'clusters: tasks at once in each packed element',
    intOption('--max-tasks-per-node', COUNTS.tasks),
  ],
  ['--partition <name>', 'Slurm partition (default: the cluster’s default, or config)'],
  ['--account <name>', 'Slurm account'],
  ['--qos <name>', 'Slurm QOS'],
  [
    '--after <ids>',
    'start after these ended well (every task succeeded): clusters: scheduler job ids; local: drover launch ids, e.g. 3,5',
  ],
  [
    '--retries <n>',
    'retry a failed, killed or timed-out task up to n times (default: config retries, else 0)',
    intOption('--retries', COUNTS.retries),
  ],
  [
    '--retry-delay <s>',
    'seconds before the first retry; doubles each retry, max 60 s, ±20%',
    durationOption('--retry-delay', SECONDS.retryDelay),
    LAUNCH_DEFAULTS.retryDelay,
  ],
  [
    '--kill-grace <s>',
    'seconds between SIGTERM and SIGKILL when stopping a task',
    durationOption('--kill-grace', SECONDS.killGrace),
    LAUNCH_DEFAULTS.killGrace,
  ],
  ['--signal <SIG@TIME>', 'send each task SIG, TIME before its time limit, e.g. USR1@5m', signalOption],
  [
    '--requeue <n>',
    'run a task that hit its time limit (its --task-timeout, or its cluster element’s --duration), exited 75 (it checkpointed) or was preempted again, with DROVER_RESUME=1, up to n times (not counted as retries)',
    intOption('--requeue', COUNTS.requeues),
  ],
  [
    '--requeue-exit <code>',
    'the exit code by which a task asks to be requeued (default 75, EX_TEMPFAIL)',
    intOption('--requeue-exit', COUNTS.exitCode),
  ],
  ['--venv <path>', 'activate this Python virtualenv for each task'],
  [
    '--env <name=value>',
    'set this variable for every task (repeatable; on every backend and pool)',
    envOption,
  ],
  [
    '--result <source>',
    'where drover results finds each task’s result: file (what it wrote to $DROVER_RESULT_FILE, default) or stdout (its last stdout line that is a JSON object)',
  ],
  [
    '--logs <how>',
    'how tasks’ output is kept: segments (a few append-only files per runner slot, each attempt a byte range; the default on local and pools) or files (two per attempt; the default on Slurm and Grid Engine, where segments apply to packed elements)',
  ],
  [
    '--dry-run',
    'show what would run (on a cluster: the sbatch/qsub commands, as the launch would run them) and record nothing but the history',
  ],
  ['--detach', 'local: run in the background and return at once'],
  ['--json', 'print the launch (and, in the foreground, its final counts) as JSON'],
  ['-q, --quiet', 'no progress display'],
];

/** Register `drover launch`. */
export function registerLaunch(program: Command): void {
  const cmd = program
    .command('launch')
    .description('run a job’s tasks (all, a tasklist, --failed or --unfinished) on a backend')
    .usage('[options] [job] [-- scheduler arguments]')
    .argument('[job]', 'the job to launch (the same as --jobname)');
  for (const [flags, help, parse, dflt] of OPTIONS) {
    if (parse) cmd.option(flags, help, parse as (v: string, p: unknown) => unknown, dflt);
    else cmd.option(flags, help, dflt as string | boolean | undefined);
  }
  cmd.allowExcessArguments().action(async (_job: string | undefined, opts: Flags, c: Command) => {
    const argv = process.argv.slice(2);
    const { job, schedulerArgs } = splitOperands(c.args, argv);
    if (job !== undefined) {
      if (opts.jobname !== undefined && opts.jobname !== job)
        throw usageError(
          `launch: job '${cellText(job)}' and --jobname '${cellText(String(opts.jobname))}' differ: give one of them (a value with spaces needs quotes)`,
        );
      opts.jobname = job;
    }
    process.exitCode = await run(opts, schedulerArgs, argv);
  });
}

/** The launch the flags ask for. */
function specOf(o: Flags, extraArgs: string[], argv: readonly string[]): LaunchSpec {
  const num = (k: string) => o[k] as number | undefined;
  const str = (k: string) => o[k] as string | undefined;
  if (o.pool !== undefined && o.backend !== 'local')
    throw usageError(`--pool and --backend ${o.backend} both say where to run: give one`);
  if (o.pool === undefined && o.numJobs !== undefined) throw usageError('--num-jobs is for --pool launches');
  if (o.gpus !== undefined && o.gpusPerTask !== undefined && o.gpus !== o.gpusPerTask)
    throw usageError(`--gpus ${o.gpus} and --gpus-per-task ${o.gpusPerTask} disagree: give one`);
  const gpus = num('gpusPerTask') ?? num('gpus');
  const pick = (keys: string[]) =>
    Object.fromEntries(keys.filter((k) => o[k] !== undefined).map((k) => [k, o[k]]));
  return {
    backend: o.pool !== undefined ? poolRef(String(o.pool)) : (o.backend as string),
    ...pick([
      'jobname',
      'command',
      'numJobs',
      'jobfile',
      'tasklist',
      'failed',
      'unfinished',
      'retries',
      'taskTimeout',
      'signal',
      'requeue',
      'requeueExit',
      'detach',
      'dryRun',
      'result',
      'logs',
    ]),
    request: {
      ...pick(['cpus', 'duration', 'maxTasks', 'maxTasksPerNode', 'partition', 'account', 'qos', 'after']),
      ...(gpus !== undefined ? { gpus } : {}),
      ...(o.mem !== undefined ? { memMb: num('mem') } : {}),
      tasksPerNode: num('tasksPerNode') ?? LAUNCH_DEFAULTS.tasksPerNode,
      extraArgs,
    },
    retryDelay: num('retryDelay')!,
    killGrace: num('killGrace')!,
    ...(str('venv') !== undefined ? { venv: path.resolve(str('venv')!) } : {}),
    ...(o.env !== undefined ? { env: o.env as unknown as Record<string, string> } : {}),
    cwd: process.cwd(),
    argv,
  } as LaunchSpec;
}

async function run(o: Flags, extraArgs: string[], argv: readonly string[]): Promise<number> {
  // Checked before anything is read (the library takes it as checked; a pool's controller checks what it gets).
  const asked = specOf(o, extraArgs, argv);
  const spec = checkSpec(asked, launchBackend(asked.backend));
  if (poolOf(spec.backend) !== undefined)
    return launchOnPool(spec, { follow: o.follow === true, json: o.json === true, quiet: o.quiet === true });
  // A launch of a job this folder does not have creates nothing (not even .drover/).
  if (
    spec.command === undefined &&
    spec.jobfile === undefined &&
    spec.jobname !== undefined &&
    !openExistingWorkspace()
  )
    throw jobNotFound(spec.jobname);
  const ws = openWorkspace();
  if (spec.backend === 'local' && spec.request.after !== undefined) {
    const stop = await localAfter(ws, spec, spec.request.after, argv);
    if (stop !== undefined) return stop;
  }
  const show = !o.quiet && !o.json;
  const made = await launch(ws, spec, {
    drover: { bin: self.bin, node: process.execPath },
    report: note,
    ...(show
      ? { observer: (n: number, job: string) => new Progress(n, job, { label: taskLabeler(ws.ledger, job) }) }
      : {}),
  });
  const what = spec.failed ? 'failed tasks' : spec.unfinished ? 'unfinished tasks' : 'tasks';
  const code = reportLaunch(ws, made, o.json === true, what);
  // A launch that runs on elsewhere (a cluster, a detached runner) is followed as drover watch does.
  if (!o.follow || !made.launch || made.outcome?.ran || code !== 0) return code;
  return watch(made.jobname, { launch: made.launch.id, quiet: o.quiet === true, silent: o.json === true });
}
