import path from 'node:path';
import { expandAll } from '../backends/pool/expand.js';
import { parseMemMb } from '../backends/pool/start.js';
import { refresh } from '../backends/refresh.js';
import { backendConfig } from '../config/config.js';
import { DroverError, usageError } from '../errors.js';
import { loadJob } from '../launch/load-job.js';
import { checkSelection, selectTasks } from '../launch/select.js';
import { recordHistory } from '../ledger/history.js';
import { findJob, type JobRow, jobTaskIds, resolveTasklist } from '../ledger/jobs.js';
import type { Ledger } from '../ledger/ledger.js';
import { taskIdsWhere } from '../ledger/queries.js';
import type { CreateLaunchRequest, LaunchCreated, LaunchSettings } from '../protocol/messages.js';
import { validateJobname } from '../sweep/index.js';
import { condenseIds, parseBlocks } from '../tasklist/tasklist.js';
import { couldEverFit } from './dispatch.js';
import { getPool } from './pool-row.js';

/**
 * Refuse to launch tasks that are queued or running in another launch (two copies would race for one attempt
 * number), as direct launches do. Reads only the job's active tasks (an index), after making the task rows of
 * its other pool launches that are still being made.
 */
function refuseActive(ledger: Ledger, jobId: number, jobname: string, tasklist: string): void {
  const open = ledger
    .stmt("SELECT id FROM launches WHERE job_id = ? AND open = 1 AND backend LIKE 'pool:%'")
    .all(jobId) as { id: number }[];
  for (const l of open) expandAll(ledger, l.id);
  const blocks = parseBlocks(tasklist);
  const inList = (id: number) =>
    blocks.some((b) => id >= b.first && id <= b.last && (id - b.first) % b.step === 0);
  const active = taskIdsWhere(ledger, jobId, (st) => st === 'queued' || st === 'running').filter(inList);
  if (active.length > 0) {
    const list = condenseIds(active);
    throw usageError(
      `task ${list} of '${jobname}' is already queued or running: wait for it, cancel it first (drover cancel ${jobname} --tasklist ${list}), or leave it out`,
    );
  }
}

/**
 * The job to launch, for the API: as loadJob, but an error about its jobfile never carries the file's contents
 * (a parse error quotes them, a bad key names it): the request may name any file the server can read.
 */
function loadJobQuietly(ledger: Ledger, name: string, jobfile: string | undefined): JobRow {
  if (jobfile !== undefined && !path.isAbsolute(jobfile)) {
    throw usageError(`jobfile '${jobfile}' must be an absolute path (the server reads it)`);
  }
  try {
    return loadJob({ paths: ledger.paths, ledger }, name, jobfile !== undefined ? { jobfile } : {});
  } catch (err) {
    if (!(err instanceof DroverError) || err.code === 'not-found' || err.code === 'usage') throw err;
    const file = jobfile ?? findJob(ledger, name)?.jobfile ?? ledger.paths.jobfile(name);
    const errno = (err.cause as NodeJS.ErrnoException | undefined)?.code;
    const why =
      errno === 'ENOENT'
        ? 'does not exist'
        : typeof errno === 'string'
          ? `cannot be read (${errno})`
          : "is not a jobfile (onager's JSON of task id to [command, tag])";
    throw new DroverError(
      err.code,
      `jobfile ${file} ${why}: check it on the server's host, or run drover prelaunch again`,
    );
  }
}

/**
 * Create a pool launch in ONE transaction whose size does not depend on the number of tasks: a job row (for
 * --num-jobs), a launch row and a pool_launches row naming the task ids as a tasklist. The task rows are made
 * right after, in chunks (backends/pool/expand.ts). Only --failed and --unfinished read the job's task states.
 */
export function createPoolLaunch(
  ledger: Ledger,
  req: CreateLaunchRequest,
  liveWorkers: (pool: string) => number,
): LaunchCreated | { launch: null; jobname: string; tasks: 0 } {
  const pool = getPool(ledger, req.pool);
  const demand = { cpus: req.cpus ?? 1, gpus: req.gpus ?? 0, mem_mb: parseMemMb(req.mem) };
  if (!couldEverFit({ capacity: { cpus: pool.cpus, gpus: pool.gpus, mem_mb: pool.mem_mb } }, demand)) {
    throw new DroverError(
      'conflict',
      `tasks needing ${demand.cpus} CPU(s), ${demand.gpus} GPU(s)${demand.mem_mb ? `, ${demand.mem_mb} MiB` : ''} never fit a worker of pool '${pool.name}' (${pool.cpus} CPUs, ${pool.gpus} GPUs${pool.mem_mb ? `, ${pool.mem_mb} MiB` : ''}): ask for less or make a bigger pool`,
    );
  }
  if (!path.isAbsolute(req.cwd)) throw usageError(`cwd '${req.cwd}' must be an absolute path`);
  checkSelection(req);
  const config = backendConfig(ledger.paths.localConfig, 'pool');
  const numJobs = req.command !== undefined ? (req.num_jobs ?? 1) : null;
  if (req.num_jobs !== undefined && req.command === undefined)
    throw usageError('--num-jobs needs --command CMD');
  if (numJobs !== null && (req.tasklist !== undefined || req.failed || req.unfinished)) {
    throw usageError(
      '--command runs a new job: --tasklist, --failed and --unfinished are for --jobname jobs',
    );
  }
  return ledger.write(() => {
    const now = Date.now() / 1000;
    let jobId: number;
    let jobname: string;
    let tasklist: string;
    let total: number;
    if (numJobs !== null) {
      const stamp = new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
      jobname = validateJobname(req.jobname ?? `pool-${stamp}-${Math.random().toString(36).slice(2, 6)}`);
      if (findJob(ledger, jobname)) {
        throw new DroverError(
          'conflict',
          `job '${jobname}' already exists: pick another --jobname for --command`,
        );
      }
      const info = ledger
        .stmt('INSERT INTO jobs (name, created_at, jobfile, task_count, max_task) VALUES (?, ?, ?, ?, ?)')
        .run(jobname, now, ledger.paths.jobfile(jobname), numJobs, numJobs);
      jobId = Number(info.lastInsertRowid);
      tasklist = `1-${numJobs}`;
      total = numJobs;
    } else {
      if (req.jobname === undefined) throw usageError('a pool launch needs --jobname JOB or --command CMD');
      const job = loadJobQuietly(ledger, req.jobname, req.jobfile);
      jobId = job.id;
      jobname = job.name;
      if (req.failed || req.unfinished) {
        refresh(ledger, job.id);
        const ids = selectTasks(ledger, job, req);
        tasklist = ids.length > 0 ? condenseIds(ids) : '';
        total = ids.length;
      } else if (req.tasklist !== undefined) {
        const ids = resolveTasklist(ledger, job, req.tasklist);
        tasklist = condenseIds(ids);
        total = ids.length;
      } else {
        const ids = jobTaskIds(ledger, job.id);
        tasklist = condenseIds(ids);
        total = ids.length;
      }
      if (total === 0) return { launch: null, jobname, tasks: 0 as const };
      refuseActive(ledger, job.id, jobname, tasklist);
    }
    const options = {
      pool: pool.name,
      ...(req.command !== undefined ? { command: req.command, num_jobs: numJobs } : {}),
      ...demand,
      retries: req.retries ?? 0,
      retryDelay: req.retry_delay ?? 1,
      taskTimeout: req.task_timeout,
    };
    const info = ledger
      .stmt(
        `INSERT INTO launches (job_id, backend, tasklist, task_count, created_at, dir, options)
         VALUES (?, ?, ?, ?, ?, '', ?)`,
      )
      .run(jobId, `pool:${pool.name}`, tasklist, total, now, JSON.stringify(options));
    const id = Number(info.lastInsertRowid);
    ledger.stmt('UPDATE launches SET dir = ? WHERE id = ?').run(ledger.paths.launchDir(jobname, id), id);
    const settings: LaunchSettings = {
      job: jobname,
      launch: id,
      cwd: req.cwd,
      logDir: ledger.paths.logDir(jobname, id),
      ...(req.task_timeout !== undefined ? { taskTimeout: req.task_timeout } : {}),
      killGrace: req.kill_grace ?? 5,
      ...(config.header ? { header: config.header } : {}),
      ...(config.footer ? { footer: config.footer } : {}),
      ...(config.venv ? { venv: path.resolve(req.cwd, config.venv) } : {}),
      ...(req.env ? { env: req.env } : {}),
    };
    ledger
      .stmt(
        `INSERT INTO pool_launches (launch_id, pool, tasklist, total, num_jobs, cpus, gpus, mem_mb, retries, retry_delay, settings)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        id,
        pool.name,
        tasklist,
        total,
        numJobs,
        demand.cpus,
        demand.gpus,
        demand.mem_mb,
        req.retries ?? 0,
        req.retry_delay ?? 1,
        JSON.stringify(settings),
      );
    recordHistory(ledger, { kind: 'launch', jobname, argv: req.argv ?? [], launchId: id });
    return {
      launch: String(id),
      jobname,
      pool: pool.name,
      tasks: total,
      tasklist,
      workers: liveWorkers(pool.name),
    };
  });
}
