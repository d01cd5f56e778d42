import { DroverError } from '../errors.js';
import { launch } from '../launch/launch.js';
import type { LaunchSpec } from '../launch/spec.js';
import { fromWire } from '../launch/wire.js';
import type { Ledger } from '../ledger/ledger.js';
import { poolOf } from '../protocol/backend-ref.js';
import type { CreateLaunchRequest, LaunchCreated } from '../protocol/messages.js';
import { couldEverFit } from './dispatch.js';
import { getPool } from './pool-row.js';

/** The answer when a launch selects no task (`--failed` with none failed), or a dry run. */
export type LaunchNotMade = {
  launch: null;
  jobname: string;
  tasks: number;
  dry_run?: true;
  tasklist?: string;
};

/**
 * `POST /v1/launches`: a pool launch through the one launch path (src/launch/), in ONE transaction whose size does
 * not depend on the number of tasks (the dispatcher makes their rows in chunks). Refused at once when the pool
 * is missing or its workers could never fit a task.
 */
export async function createPoolLaunch(
  ledger: Ledger,
  req: CreateLaunchRequest,
  liveWorkers: (pool: string) => number,
): Promise<LaunchCreated | LaunchNotMade> {
  return launchOnPool(ledger, fromWire(req), liveWorkers);
}

/** A launch onto the pool `spec.backend` names (`pool:NAME`): the wire's, or a dashboard rerun's. */
export async function launchOnPool(
  ledger: Ledger,
  spec: LaunchSpec,
  liveWorkers: (pool: string) => number,
): Promise<LaunchCreated | LaunchNotMade> {
  const name = poolOf(spec.backend);
  if (name === undefined) throw new Error(`not a pool backend: ${spec.backend}`);
  const pool = getPool(ledger, name);
  const r = spec.request;
  const demand = { cpus: r.cpus ?? 1, gpus: r.gpus ?? 0, mem_mb: r.memMb ?? 0 };
  if (!couldEverFit({ capacity: { cpus: pool.cpus, gpus: pool.gpus, mem_mb: pool.mem_mb } }, demand)) {
    throw new DroverError(
      'conflict',
      `tasks needing ${demand.cpus} CPU(s), ${demand.gpus} GPU(s)${demand.mem_mb ? `, ${demand.mem_mb} MiB` : ''} never fit a worker of pool '${pool.name}' (${pool.cpus} CPUs, ${pool.gpus} GPUs${pool.mem_mb ? `, ${pool.mem_mb} MiB` : ''}): ask for less or make a bigger pool`,
    );
  }
  const made = await launch({ paths: ledger.paths, ledger }, spec, {
    drover: { bin: '', node: process.execPath },
    quietJobfile: true,
  });
  if (made.launch === null) {
    return spec.dryRun
      ? { launch: null, jobname: made.jobname, tasks: made.count, tasklist: made.tasklist, dry_run: true }
      : { launch: null, jobname: made.jobname, tasks: 0 };
  }
  return {
    launch: String(made.launch.id),
    jobname: made.jobname,
    pool: pool.name,
    tasks: made.count,
    tasklist: made.tasklist,
    workers: liveWorkers(pool.name),
    ...(pool.auto !== null ? { auto: true } : {}),
  };
}
