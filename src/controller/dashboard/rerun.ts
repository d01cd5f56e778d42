import { launch } from '../../launch/launch.js';
import { failedRerunSpec } from '../../launch/spec.js';
import type { JobRow } from '../../ledger/jobs.js';
import type { Ledger } from '../../ledger/ledger.js';
import { backendArgv, poolOf } from '../../protocol/backend-ref.js';
import type { RerunFailedAnswer } from '../../protocol/dashboard.js';
import { HttpError } from '../http-error.js';
import { launchOnPool } from '../launch-create.js';
import { liveWorkerCount } from '../pool-status.js';
import type { DashboardContext } from './context.js';

/**
 * Rerun a job's failed tasks where its latest launch ran, with its settings, through the one launch path
 * (src/launch/), as `drover launch JOB --failed` with them would: on a pool through the controller's own launch (its dispatcher takes it at
 * once), elsewhere by the launch library in this process — a local rerun detached, so it outlives the request.
 */
export async function rerunFailed(
  d: DashboardContext,
  ledger: Ledger,
  job: JobRow,
  backend: string,
  /** The `options` of the job's latest launch: the rerun carries its settings (failedRerunSpec). */
  previous: string,
): Promise<RerunFailedAnswer> {
  if (!d.drover) throw new HttpError(403, 'read-only', 'this dashboard cannot start launches');
  const argv = ['launch', job.name, '--failed', ...backendArgv(backend), '(dashboard)'];
  const spec = failedRerunSpec(job.name, backend, d.drover.cwd, argv, previous);
  if (poolOf(backend) !== undefined) {
    const ctx = d.pools?.();
    if (!ctx) throw new HttpError(403, 'read-only', 'this dashboard has no pool controller to launch on');
    const made = await launchOnPool(ledger, spec, (name) => liveWorkerCount(ctx, name));
    if (made.launch !== null) ctx.controller.loadLaunch(Number(made.launch));
    return { ...made };
  }
  const made = await launch({ paths: ledger.paths, ledger }, spec, {
    drover: { bin: d.drover.bin, node: d.drover.node },
    quietJobfile: true,
  });
  if (made.launch === null || !made.outcome) return { jobname: made.jobname, launch: null, tasks: 0 };
  return {
    jobname: made.jobname,
    launch: String(made.launch.id),
    backend: made.backend,
    tasks: made.count,
    tasklist: made.tasklist,
    handles: made.outcome.handles ?? {},
    warnings: made.outcome.warnings,
  };
}
