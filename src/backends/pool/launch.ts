import fs from 'node:fs';
import path from 'node:path';
import type { LaunchOptions } from '../../cli/launch.js';
import { formatDuration, note, printJson } from '../../cli/output.js';
import { openWorkspace } from '../../cli/workspace.js';
import { usageError } from '../../errors.js';
import { STATES } from '../../ledger/states.js';
import { type ApiClient, ApiError } from '../../protocol/client.js';
import type { CreateLaunchRequest, LaunchCreated, LaunchProgress } from '../../protocol/messages.js';
import { validateJobname } from '../../sweep/index.js';
import { formatSize } from '../../util/size.js';
import { apiError, call, connect } from './client.js';
import { readServerInfo } from './server-info.js';

/** `drover launch` options that only a pool launch has. */
export interface PoolLaunchOptions {
  pool?: string;
  numJobs?: number;
  follow?: boolean;
}

function check(opts: LaunchOptions & PoolLaunchOptions, extraArgs: string[]): void {
  if (opts.backend !== 'local')
    throw usageError(`--pool and --backend ${opts.backend} both say where to run: give one`);
  if (extraArgs.length > 0)
    throw usageError(`'${extraArgs[0]}': arguments after -- are for cluster schedulers, not --pool`);
  for (const [flag, v] of [
    ['--tasks-per-node', opts.tasksPerNode],
    ['--max-tasks-per-node', opts.maxTasksPerNode],
    ['--max-tasks', opts.maxTasks],
    ['--partition', opts.partition],
    ['--account', opts.account],
    ['--qos', opts.qos],
    ['--after', opts.after],
    ['--detach', opts.detach],
    ['--duration', opts.duration],
  ] as const) {
    if (v !== undefined && v !== false) {
      throw usageError(
        `${flag} does not apply to --pool (${flag === '--duration' ? 'use --task-timeout for each task' : 'the pool decides'}): drop it`,
      );
    }
  }
  if (!opts.jobname && opts.command === undefined)
    throw usageError('launch needs --jobname JOB or --command CMD');
  if (opts.command !== undefined && opts.command.trim() === '')
    throw usageError("--command '' is empty: give the command to run");
  if (opts.numJobs !== undefined && opts.command === undefined)
    throw usageError('--num-jobs needs --command CMD');
  if (opts.command !== undefined && (opts.tasklist || opts.failed || opts.unfinished)) {
    throw usageError('--command makes a new job: --tasklist, --failed and --unfinished are for --jobname');
  }
  if (opts.jobname !== undefined) validateJobname(opts.jobname);
}

/**
 * `drover launch --pool NAME`: ONE request to the controller, whatever the number of tasks (the server reads
 * the jobfile or makes the N ranks itself), answered with the launch id before anything runs. `--follow` then
 * shows live progress until the launch is done (exit 1 if a task did not succeed).
 */
export async function launchOnPool(
  opts: LaunchOptions & PoolLaunchOptions,
  extraArgs: string[],
  argv: readonly string[],
): Promise<number> {
  check(opts, extraArgs);
  const gpus = opts.gpusPerTask ?? opts.gpus;
  const req: CreateLaunchRequest = {
    pool: opts.pool!,
    ...(opts.jobname !== undefined ? { jobname: opts.jobname } : {}),
    ...(opts.jobfile !== undefined ? { jobfile: path.resolve(opts.jobfile) } : {}),
    ...(opts.tasklist !== undefined ? { tasklist: opts.tasklist } : {}),
    ...(opts.failed ? { failed: true } : {}),
    ...(opts.unfinished ? { unfinished: true } : {}),
    ...(opts.command !== undefined ? { command: opts.command, num_jobs: opts.numJobs ?? 1 } : {}),
    ...(opts.cpus !== undefined ? { cpus: opts.cpus } : {}),
    ...(gpus !== undefined ? { gpus } : {}),
    ...(opts.mem !== undefined ? { mem: formatSize(opts.mem) } : {}),
    retries: opts.retries,
    retry_delay: opts.retryDelay,
    ...(opts.taskTimeout !== undefined ? { task_timeout: opts.taskTimeout } : {}),
    kill_grace: opts.killGrace,
    cwd: process.cwd(),
    ...(opts.venv !== undefined
      ? (() => {
          if (!fs.existsSync(path.join(opts.venv, 'bin'))) {
            throw usageError(`--venv '${opts.venv}' has no bin/ folder: give the path of a virtualenv`);
          }
          const v = path.resolve(opts.venv);
          return { env: { VIRTUAL_ENV: v, PATH: `${path.join(v, 'bin')}:${process.env.PATH ?? ''}` } };
        })()
      : {}),
    argv: [...argv],
  };
  const ws = openWorkspace();
  if (opts.dryRun) {
    note(
      `would launch ${opts.command !== undefined ? `${opts.numJobs ?? 1} × ${opts.command}` : `job '${opts.jobname}'${opts.tasklist ? ` tasks ${opts.tasklist}` : ''}`} on pool ${opts.pool}`,
    );
    return 0;
  }
  const api = connect(ws.paths);
  const show = !opts.json && !opts.quiet;
  const t0 = process.hrtime.bigint();
  const made = await call<LaunchCreated | { launch: null; jobname: string; tasks: 0 }>(
    api,
    'POST',
    '/launches',
    req,
  );
  const submitMs = Number(process.hrtime.bigint() - t0) / 1e6;
  if (made.launch === null) {
    const what = opts.failed ? 'no failed tasks' : opts.unfinished ? 'no unfinished tasks' : 'no tasks';
    note(`drover: nothing to launch: job '${made.jobname}' has ${what}`);
    if (opts.json) printJson({ jobname: made.jobname, launch: null, tasks: 0 });
    return 0;
  }
  const base = {
    jobname: made.jobname,
    launch: made.launch,
    backend: `pool:${made.pool}`,
    tasks: made.tasks,
    tasklist: made.tasklist,
    submit_ms: Math.round(submitMs * 100) / 100,
  };
  if (made.workers === 0 && !opts.quiet) note(noWorkers(made.pool));
  if (!opts.follow) {
    if (opts.json) printJson(base);
    else {
      note(
        `launch ${made.launch}: ${made.tasks} task(s) of '${made.jobname}' queued on pool ${made.pool}; follow with: drover status ${made.jobname}`,
      );
    }
    return 0;
  }
  if (show) note(`launch ${made.launch}: ${made.tasks} task(s) of '${made.jobname}' on pool ${made.pool}`);
  const p = await follow(api, made.launch, show, () =>
    process.env.DROVER_SERVER === undefined ? readServerInfo(ws.paths)?.url : undefined,
  );
  if (opts.json) printJson({ ...base, counts: p.counts });
  return p.counts.succeeded === p.tasks ? 0 : 1;
}

/** What to say when a pool has no live worker. */
function noWorkers(pool: string): string {
  return `drover: pool ${pool} has no live worker: the tasks wait until one registers (drover pool status ${pool} --all; drover pool scale ${pool} --workers N)`;
}

/** How long --follow waits for a controller that went away (as workers do). */
const PATIENCE_MS = 600_000;

/**
 * Ask the controller, and when it is away (restarting, maybe on another port: `url()` re-reads server.json),
 * ask again with backoff until it is back, up to PATIENCE_MS.
 */
async function ask<T>(
  api: ApiClient,
  path: string,
  url: () => string | undefined,
  show: boolean,
): Promise<T> {
  let since: number | undefined;
  let delay = 100;
  for (;;) {
    try {
      const answer = await api.call<T>('GET', path);
      if (since !== undefined && show) note('drover: the server is back: following again');
      return answer;
    } catch (err) {
      const away = err instanceof ApiError && (err.status === 0 || err.status === 503);
      if (!away) throw apiError(err);
      if (since === undefined) {
        since = Date.now();
        if (show) note(`drover: lost the server (${err.message}): reconnecting`);
      } else if (Date.now() - since > PATIENCE_MS) {
        throw apiError(err);
      }
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(1000, delay * 2);
      api.url = url() ?? api.url;
    }
  }
}

/**
 * Print a progress line each time the launch changes (long-poll), until it is done; say so while its pool has no
 * live worker; ride out a restart of the controller.
 */
async function follow(
  api: ApiClient,
  id: string,
  show: boolean,
  url: () => string | undefined,
): Promise<LaunchProgress> {
  const t0 = Date.now();
  let p = await ask<LaunchProgress>(api, `/launches/${id}`, url, show);
  let last = '';
  let idle = p.workers === 0;
  for (;;) {
    const line = STATES.filter((s) => p.counts[s]! > 0)
      .map((s) => `${s} ${p.counts[s]}`)
      .join(' · ');
    if (show && line !== last) {
      process.stderr.write(`${formatDuration((Date.now() - t0) / 1000).padStart(6)}  ${line}\n`);
      last = line;
    }
    if (!p.open) return p;
    if (p.workers === 0 && !idle && show) note(noWorkers(p.pool));
    idle = p.workers === 0;
    // At most a few updates a second: each answer counts the launch's tasks.
    await new Promise((r) => setTimeout(r, 300));
    p = await ask<LaunchProgress>(api, `/launches/${id}?since=${p.version}&wait=20`, url, show);
  }
}
