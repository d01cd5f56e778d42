import type { FastifyInstance } from 'fastify';
import { refresh } from '../../backends/refresh.js';
import { applyCancel, cancelPlan } from '../../launch/cancel.js';
import { recordHistory } from '../../ledger/history.js';
import { jobLaunches } from '../../ledger/launches.js';
import type { CancelAnswer, RerunFailedAnswer } from '../../protocol/dashboard.js';
import { parseTasklist } from '../../tasklist/tasklist.js';
import type { Controller } from '../controller.js';
import { HttpError } from '../http-error.js';
import * as S from '../schemas.js';
import { type DashboardContext, fullRefresh, jobOf, UI, user } from './context.js';
import { rerunFailed } from './rerun.js';

/** Register the dashboard's actions: cancel (a job, or some of its tasks) and rerun failed. Never in `drover ui`. */
export function actionRoutes(app: FastifyInstance, d: DashboardContext): void {
  // Actions: the same token, and never in `drover ui`.
  const action = (what: string) => {
    if (d.readOnly) {
      throw new HttpError(
        403,
        'read-only',
        `this dashboard is read-only (drover ui): ${what} with drover server, or the CLI`,
      );
    }
  };
  app.post<{ Params: { name: string }; Body: { tasklist?: string } }>(
    `${UI}/jobs/:name/cancel`,
    {
      config: user,
      schema: { body: S.dashboardCancelSchema },
    },
    async (req): Promise<CancelAnswer> => {
      action('cancel');
      const ledger = d.ledger();
      const job = jobOf(ledger, req.params.name, fullRefresh(ledger));
      let wanted: Set<number> | undefined;
      if (req.body?.tasklist !== undefined) {
        try {
          wanted = new Set(parseTasklist(req.body.tasklist, job.max_task, job.name));
        } catch (err) {
          throw new HttpError(400, 'bad-request', (err as Error).message);
        }
      }
      const plan = cancelPlan(ledger, job.id, wanted);
      const ids = plan.flatMap((p) => p.ids);
      if (ids.length > 0) {
        ledger.write(() =>
          recordHistory(ledger, {
            kind: 'cancel',
            jobname: job.name,
            argv: [
              'cancel',
              job.name,
              ...(req.body?.tasklist ? ['--tasklist', req.body.tasklist] : []),
              '(dashboard)',
            ],
          }),
        );
        applyCancel(ledger, plan, wanted === undefined);
        wake(d.pools?.().controller);
        refresh(ledger, job.id);
      }
      return { jobname: job.name, cancelled: ids };
    },
  );
  app.post<{ Params: { name: string } }>(
    `${UI}/jobs/:name/rerun-failed`,
    { config: user },
    async (req): Promise<RerunFailedAnswer> => {
      action('rerun');
      const ledger = d.ledger();
      const job = jobOf(ledger, req.params.name, fullRefresh(ledger));
      const latest = jobLaunches(ledger, job.id).at(-1);
      if (!latest)
        throw new HttpError(409, 'conflict', `job '${job.name}' was never launched: launch it first`);
      return rerunFailed(d, ledger, job, latest.backend, latest.options);
    },
  );
}

/** Wake the controller to act on cancels now (pool tasks held by workers). */
function wake(controller: Controller | undefined): void {
  controller?.processCancels();
}
