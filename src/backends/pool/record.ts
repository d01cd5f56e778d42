import type { LaunchRow } from '../../ledger/launches.js';
import { createPoolLaunch } from '../../ledger/transitions.js';
import { poolOf } from '../../protocol/backend-ref.js';
import type { LaunchSettings } from '../../protocol/messages.js';
import { REQUEUE_EXIT_DEFAULT } from '../../runner/reasons.js';
import type { LaunchMode, LaunchOutcome, LaunchPlan } from '../backend.js';

/**
 * Write a pool launch's queue row (inside the launch's transaction): its tasks as a tasklist, what each needs,
 * retries and the settings workers get. Its task rows are made as they are dispatched (ledger/transitions/expand.ts).
 */
export function recordPoolLaunch(plan: LaunchPlan & { launch: LaunchRow }): void {
  const { launch, settings: s, request, config } = plan;
  const settings: LaunchSettings = {
    job: s.job,
    launch: launch.id,
    cwd: s.cwd,
    logDir: s.logDir,
    ...(s.logs ? { logs: s.logs } : {}),
    ...(s.taskTimeout !== undefined ? { taskTimeout: s.taskTimeout } : {}),
    killGrace: s.killGrace,
    ...(s.warnSignal ? { warnSignal: s.warnSignal } : {}),
    ...(s.requeue ? { requeue: s.requeue, requeueExit: s.requeueExit ?? REQUEUE_EXIT_DEFAULT } : {}),
    ...(config.header ? { header: config.header } : {}),
    ...(config.footer ? { footer: config.footer } : {}),
    ...(s.venv ? { venv: s.venv } : {}),
    ...(s.env ? { env: s.env } : {}),
  };
  createPoolLaunch(plan.ledger, {
    launch_id: launch.id,
    pool: poolOf(launch.backend)!,
    tasklist: launch.tasklist,
    total: launch.task_count,
    num_jobs: plan.numJobs ?? null,
    cpus: request.cpus ?? 1,
    gpus: request.gpus ?? 0,
    mem_mb: request.memMb ?? 0,
    retries: s.retries,
    retry_delay: s.retryDelay,
    settings: JSON.stringify(settings),
  });
}

/** A pool launch is submitted once its rows are written: the controller's dispatcher takes it from there. */
export async function launchOnPool(plan: LaunchPlan, mode: LaunchMode): Promise<LaunchOutcome> {
  const where = `on pool ${poolOf(plan.backend)}`;
  const what = `${plan.count} task(s) of '${plan.job.name}'`;
  return {
    summary: mode === 'dry-run' ? `${what} would be queued` : `${what} queued ${where}`,
    warnings: [],
  };
}
