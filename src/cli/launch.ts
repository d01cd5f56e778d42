import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { runDetached, runForeground } from '../backends/local/submit.js';
import { refresh } from '../backends/refresh.js';
import { backendConfig } from '../config/config.js';
import { DroverError, usageError } from '../errors.js';
import { loadJob } from '../launch/load-job.js';
import { checkSelection, selectTasks } from '../launch/select.js';
import { recordHistory } from '../ledger/history.js';
import { createLaunch } from '../ledger/launches.js';
import { launchCounts } from '../ledger/queries.js';
import type { GroupFile, LaunchFile } from '../runner/group.js';
import { writeFileAtomic } from '../runner/group.js';
import { serializeJobfile, validateJobname, writeJobfileAtomic } from '../sweep/index.js';
import { condenseIds } from '../tasklist/tasklist.js';
import { parseDuration } from '../util/duration.js';
import { note, printJson } from './output.js';
import { intOption, secondsOption } from './parse.js';
import { printLaunchSummary } from './summary.js';
import { openWorkspace, type Workspace } from './workspace.js';

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
  mem?: string;
  duration?: string;
  taskTimeout?: string;
  maxTasks?: number;
  tasksPerNode?: number;
  maxTasksPerNode?: number;
  retries: number;
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
    .option('--backend <name>', 'where to run: local (this machine)', 'local')
    .option('--jobname <name>', 'the job to launch (made by drover prelaunch)')
    .option('--command <cmd>', 'launch a single command as a one-task job (named by --jobname or the time)')
    .option(
      '--jobfile <path>',
      'read the job’s tasks from this jobfile instead of .drover/jobs/<job>/jobs.json',
    )
    .option('--tasklist <list>', 'only these tasks, e.g. 1-3,5,8-9 or 1-100:2')
    .option('--failed', 'only tasks whose latest attempt failed, was killed, timed out, was lost or errored')
    .option('--unfinished', 'every task that has not succeeded and is not queued or running now')
    .option('--cpus <n>', 'CPUs per task (local: slots = CPUs available / n)', intOption('--cpus'))
    .option('--gpus <n>', 'GPUs per task, pinned per slot from CUDA_VISIBLE_DEVICES', intOption('--gpus'))
    .option('--gpus-per-task <n>', 'same as --gpus for the local backend', intOption('--gpus-per-task'))
    .option('--mem <size>', 'memory per task (recorded; enforced by cluster backends)')
    .option('--duration <time>', 'time limit (local: per task), e.g. 90s, 10m, 1:00:00')
    .option('--task-timeout <time>', 'time limit of each task attempt; it ends as timeout')
    .option(
      '--max-tasks <n>',
      'tasks running at once (default: CPUs available / --cpus)',
      intOption('--max-tasks'),
    )
    .option(
      '--tasks-per-node <n>',
      'cluster backends: tasks packed into each array element',
      intOption('--tasks-per-node'),
    )
    .option(
      '--max-tasks-per-node <n>',
      'cluster backends: tasks at once in each element',
      intOption('--max-tasks-per-node'),
    )
    .option(
      '--retries <n>',
      'retry a failed, killed or timed-out task up to n times',
      intOption('--retries', 0),
      0,
    )
    .option(
      '--retry-delay <s>',
      'seconds before the first retry; doubles each retry, max 60 s, ±20%',
      secondsOption('--retry-delay'),
      1,
    )
    .option(
      '--kill-grace <s>',
      'seconds between SIGTERM and SIGKILL when stopping a task',
      secondsOption('--kill-grace'),
      5,
    )
    .option('--venv <path>', 'activate this Python virtualenv for each task')
    .option('--dry-run', 'show what would run and record nothing but the history')
    .option('--detach', 'run in the background and return at once (local)')
    .option('--json', 'print the launch (and, in the foreground, its final counts) as JSON')
    .option('-q, --quiet', 'no progress display')
    .action(async (opts: LaunchOptions) => {
      process.exitCode = await launch(opts, process.argv.slice(2));
    });
}

function checkOptions(opts: LaunchOptions): void {
  if (opts.backend !== 'local') {
    throw usageError(`--backend '${opts.backend}' is not available in this drover yet: use --backend local`);
  }
  if (!opts.jobname && opts.command === undefined)
    throw usageError('launch needs --jobname JOB or --command CMD');
  if (opts.command !== undefined && opts.command.trim() === '')
    throw usageError("--command '' is empty: give the command to run");
  checkSelection(opts);
  if (opts.command !== undefined && (opts.tasklist || opts.failed || opts.unfinished) && !opts.jobname) {
    throw usageError('--tasklist, --failed and --unfinished need --jobname');
  }
  if (opts.gpus !== undefined && opts.gpusPerTask !== undefined && opts.gpus !== opts.gpusPerTask) {
    throw usageError(`--gpus ${opts.gpus} and --gpus-per-task ${opts.gpusPerTask} disagree: give one`);
  }
  if (opts.detach && opts.dryRun) throw usageError('--detach and --dry-run together do nothing: drop one');
}

/** Make the one-task job of `--command`; refuses to overwrite a job with other tasks. */
function commandJob(ws: Workspace, opts: LaunchOptions): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  const name = validateJobname(opts.jobname ?? `command-${stamp}`);
  const file = ws.paths.jobfile(name);
  const text = serializeJobfile(new Map([[1, { command: opts.command!, tag: '' }]]));
  if (fs.existsSync(file)) {
    if (fs.readFileSync(file, 'utf8') === text) return name;
    throw usageError(`job '${name}' already exists with other tasks: pick another --jobname for --command`);
  }
  writeJobfileAtomic(file, text);
  return name;
}

async function launch(opts: LaunchOptions, argv: readonly string[]): Promise<number> {
  checkOptions(opts);
  const taskTimeout =
    opts.taskTimeout !== undefined
      ? parseDuration(opts.taskTimeout, '--task-timeout')
      : opts.duration !== undefined
        ? parseDuration(opts.duration, '--duration')
        : undefined;
  if (opts.jobname !== undefined) validateJobname(opts.jobname);
  if (opts.venv !== undefined && !fs.existsSync(path.join(opts.venv, 'bin'))) {
    throw usageError(`--venv '${opts.venv}' has no bin/ folder: give the path of a virtualenv`);
  }
  const ws = openWorkspace();
  const jobname = opts.command !== undefined && !opts.dryRun ? commandJob(ws, opts) : opts.jobname!;
  if (opts.command !== undefined && opts.dryRun) {
    note(`would run 1 task on local: ${opts.command}`);
    recordHistory(ws.ledger, {
      kind: 'launch',
      argv,
      dryRun: true,
      ...(opts.jobname ? { jobname: opts.jobname } : {}),
    });
    return 0;
  }
  const job = loadJob(ws, jobname, opts.jobfile);
  if (opts.failed || opts.unfinished) refresh(ws.ledger, job.id);
  const ids = selectTasks(ws.ledger, job, opts);
  if (ids.length === 0) {
    const what = opts.failed ? 'no failed tasks' : opts.unfinished ? 'no unfinished tasks' : 'no tasks';
    note(`drover: nothing to launch: job '${jobname}' has ${what}`);
    if (opts.json) printJson({ jobname, launch: null, tasks: 0 });
    return 0;
  }
  const config = backendConfig(ws.paths.localConfig, 'local');
  if (opts.dryRun) {
    recordHistory(ws.ledger, { kind: 'launch', jobname, argv, dryRun: true });
    note(`would launch ${ids.length} task(s) of job '${jobname}' on local: tasklist ${condenseIds(ids)}`);
    const rows = ws.ledger.db
      .prepare('SELECT id, command FROM tasks WHERE job_id = ? ORDER BY id')
      .all(job.id) as { id: number; command: string }[];
    const wanted = new Set(ids);
    for (const r of rows) if (wanted.has(r.id)) process.stdout.write(`${r.id}\t${r.command}\n`);
    return 0;
  }
  const options = {
    cpus: opts.cpus,
    gpusPerTask: opts.gpusPerTask ?? opts.gpus,
    mem: opts.mem,
    taskTimeout,
    maxTasks: opts.maxTasks ?? (config.max_tasks ? Number(config.max_tasks) : undefined),
    retries: opts.retries,
    retryDelay: opts.retryDelay,
    detach: opts.detach === true,
  };
  const { launch, tasks } = createLaunch(ws.ledger, job, 'local', ids, options, (id) =>
    ws.paths.launchDir(jobname, id),
  );
  recordHistory(ws.ledger, { kind: 'launch', jobname, argv, launchId: launch.id });
  fs.mkdirSync(launch.dir, { recursive: true });
  const launchFile: LaunchFile = {
    v: 1,
    job: jobname,
    launch: launch.id,
    groups: { '1': tasks.map((t) => ({ id: t.id, command: t.command, attempt: t.attempt })) },
    ...(options.maxTasks !== undefined ? { maxTasks: options.maxTasks } : {}),
    ...(opts.cpus !== undefined ? { cpusPerTask: opts.cpus } : {}),
    ...(options.gpusPerTask !== undefined ? { gpusPerTask: options.gpusPerTask } : {}),
    retries: opts.retries,
    retryDelay: opts.retryDelay,
    ...(taskTimeout !== undefined ? { taskTimeout } : {}),
    killGrace: opts.killGrace,
    logDir: ws.paths.logDir(jobname, launch.id),
    recordsDir: path.join(launch.dir, 'records'),
    cancelDir: path.join(launch.dir, 'cancel'),
    ...(config.header ? { header: config.header } : {}),
    ...(config.footer ? { footer: config.footer } : {}),
    ...((opts.venv ?? config.venv) ? { venv: path.resolve(opts.venv ?? config.venv!) } : {}),
    cwd: process.cwd(),
  };
  const launchPath = path.join(launch.dir, 'launch.json');
  writeFileAtomic(launchPath, JSON.stringify(launchFile));
  const { groups, ...settings } = launchFile;
  const group: GroupFile = { ...settings, group: '1', tasks: groups['1']! };

  if (opts.detach) {
    const h = runDetached(ws.ledger, launchPath, group, launch.dir);
    if (opts.json)
      printJson({
        jobname,
        launch: String(launch.id),
        backend: 'local',
        tasks: ids.length,
        tasklist: launch.tasklist,
        pid: h.pid,
      });
    else
      note(
        `launch ${launch.id}: ${ids.length} task(s) of '${jobname}' running in the background (runner pid ${h.pid}); follow with: drover status ${jobname}`,
      );
    return 0;
  }
  let result: Awaited<ReturnType<typeof runForeground>>;
  try {
    result = await runForeground(ws.ledger, group, { progress: !opts.quiet && !opts.json });
  } catch (err) {
    throw err instanceof DroverError
      ? err
      : new DroverError('backend', `the runner failed: ${String(err)}`, { cause: err });
  }
  refresh(ws.ledger, job.id);
  const counts = launchCounts(ws.ledger, launch.id);
  if (opts.json)
    printJson({
      jobname,
      launch: String(launch.id),
      backend: 'local',
      tasks: ids.length,
      tasklist: launch.tasklist,
      counts,
    });
  else printLaunchSummary(ws.ledger, job.id, launch.id, jobname);
  if (result.interrupted) return 128 + (result.interrupted === 'SIGINT' ? 2 : 15);
  return counts.succeeded === ids.length ? 0 : 1;
}
