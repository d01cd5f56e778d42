import path from 'node:path';
import { usageError } from '../errors.js';
import { poolOf, poolRef } from '../protocol/backend-ref.js';
import type { CreateLaunchRequest } from '../protocol/messages.js';
import { formatSize, parseSize } from '../util/size.js';
import { formatWarnSignal, parseWarnSignal } from '../util/warn-signal.js';
import { LAUNCH_DEFAULTS, type LaunchSpec } from './spec.js';

/**
 * A pool launch as the one request the CLI sends the controller (`POST /v1/launches`). `--command` without
 * `--num-jobs` is one rank; `--venv` travels as the tasks' environment (the CLI checked the folder).
 */
export function toWire(spec: LaunchSpec): CreateLaunchRequest {
  const r = spec.request;
  const env = spec.venv
    ? {
        ...spec.env,
        VIRTUAL_ENV: spec.venv,
        PATH: `${path.join(spec.venv, 'bin')}:${process.env.PATH ?? ''}`,
      }
    : spec.env;
  return {
    pool: poolOf(spec.backend)!,
    ...(spec.jobname !== undefined ? { jobname: spec.jobname } : {}),
    ...(spec.jobfile !== undefined ? { jobfile: path.resolve(spec.jobfile) } : {}),
    ...(spec.tasklist !== undefined ? { tasklist: spec.tasklist } : {}),
    ...(spec.failed ? { failed: true } : {}),
    ...(spec.unfinished ? { unfinished: true } : {}),
    ...(spec.command !== undefined ? { command: spec.command, num_jobs: spec.numJobs ?? 1 } : {}),
    ...(r.cpus !== undefined ? { cpus: r.cpus } : {}),
    ...(r.gpus !== undefined ? { gpus: r.gpus } : {}),
    ...(r.memMb !== undefined ? { mem: formatSize(r.memMb) } : {}),
    ...(spec.retries !== undefined ? { retries: spec.retries } : {}),
    retry_delay: spec.retryDelay,
    ...(spec.taskTimeout !== undefined ? { task_timeout: spec.taskTimeout } : {}),
    kill_grace: spec.killGrace,
    ...(spec.signal !== undefined ? { signal: formatWarnSignal(spec.signal) } : {}),
    ...(spec.requeue !== undefined ? { requeue: spec.requeue } : {}),
    ...(spec.requeueExit !== undefined ? { requeue_exit: spec.requeueExit } : {}),
    cwd: spec.cwd,
    ...(env ? { env } : {}),
    ...(spec.dryRun ? { dry_run: true } : {}),
    ...(spec.result !== undefined ? { result: spec.result } : {}),
    ...(spec.logs !== undefined ? { logs: spec.logs } : {}),
    argv: [...spec.argv],
  };
}

/** The spec of a launch request the controller received (its schema checked the types). */
export function fromWire(req: CreateLaunchRequest): LaunchSpec {
  if (req.num_jobs !== undefined && req.command === undefined)
    throw usageError('--num-jobs needs --command CMD');
  return {
    backend: poolRef(req.pool),
    ...(req.jobname !== undefined ? { jobname: req.jobname } : {}),
    ...(req.command !== undefined ? { command: req.command, numJobs: req.num_jobs ?? 1 } : {}),
    ...(req.jobfile !== undefined ? { jobfile: absolute(req.jobfile) } : {}),
    ...(req.tasklist !== undefined ? { tasklist: req.tasklist } : {}),
    ...(req.failed ? { failed: true } : {}),
    ...(req.unfinished ? { unfinished: true } : {}),
    request: {
      ...(req.cpus !== undefined ? { cpus: req.cpus } : {}),
      ...(req.gpus !== undefined ? { gpus: req.gpus } : {}),
      ...(req.mem !== undefined ? { memMb: parseSize(req.mem, '--mem') } : {}),
      tasksPerNode: LAUNCH_DEFAULTS.tasksPerNode,
      extraArgs: [],
    },
    ...(req.retries !== undefined ? { retries: req.retries } : {}),
    retryDelay: req.retry_delay ?? LAUNCH_DEFAULTS.retryDelay,
    ...(req.task_timeout !== undefined ? { taskTimeout: req.task_timeout } : {}),
    killGrace: req.kill_grace ?? LAUNCH_DEFAULTS.killGrace,
    ...(req.signal !== undefined ? { signal: parseWarnSignal(req.signal) } : {}),
    ...(req.requeue !== undefined ? { requeue: req.requeue } : {}),
    ...(req.requeue_exit !== undefined ? { requeueExit: req.requeue_exit } : {}),
    ...(req.env ? { env: req.env } : {}),
    cwd: req.cwd,
    ...(req.dry_run ? { dryRun: true } : {}),
    ...(req.result !== undefined ? { result: req.result } : {}),
    ...(req.logs !== undefined ? { logs: req.logs } : {}),
    argv: req.argv ?? [],
  };
}

function absolute(jobfile: string): string {
  if (!path.isAbsolute(jobfile))
    throw usageError(`jobfile '${jobfile}' must be an absolute path (the server reads it)`);
  return jobfile;
}
