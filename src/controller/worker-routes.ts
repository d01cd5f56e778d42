import type { FastifyInstance } from 'fastify';
import type { PollRequest, RegisterAnswer, RegisterRequest, ReportRequest } from '../protocol/messages.js';
import { API_PREFIX } from '../protocol/messages.js';
import { SMALL_BODY_BYTES } from './body-budgets.js';
import { HttpError } from './http-error.js';
import { getPool, type PoolContext } from './pool-row.js';
import * as S from './schemas.js';
import { authWorker, oneReportAtATime } from './worker-auth.js';

const worker = { audience: 'worker' as const };

/**
 * Register the worker routes (worker tokens, each for its own pool). Every route but register speaks for one
 * worker, `:id`, and must carry its session secret (worker-auth.ts). Heartbeats, polls and leaves take small
 * bodies only, so they are read apart from reports (body-budgets.ts).
 */
export function workerRoutes(app: FastifyInstance, ctx: PoolContext, heartbeat: number): void {
  const p = API_PREFIX;
  const own = authWorker(ctx);
  app.post<{ Body: RegisterRequest }>(
    `${p}/workers/register`,
    { config: worker, schema: { body: S.registerSchema } },
    async (req): Promise<RegisterAnswer> => {
      const pool = req.token?.pool;
      if (pool && pool !== req.body.pool) {
        throw new HttpError(
          403,
          'forbidden',
          `this worker token is for pool '${pool}', not '${req.body.pool}'`,
        );
      }
      getPool(ctx.ledger, req.body.pool);
      return { ...ctx.controller.register(req.body), heartbeat };
    },
  );
  app.post<{ Params: { id: string }; Body: PollRequest }>(
    `${p}/workers/:id/poll`,
    { config: worker, onRequest: own, bodyLimit: SMALL_BODY_BYTES, schema: { body: S.pollSchema } },
    async (req) => ctx.controller.poll(req.worker!, req.body.wait * 1000),
  );
  app.post<{ Params: { id: string }; Body: ReportRequest }>(
    `${p}/workers/:id/report`,
    { config: worker, onRequest: [own, oneReportAtATime], schema: { body: S.reportSchema } },
    async (req) => ctx.controller.report(req.worker!, req.body.batches),
  );
  app.post<{ Params: { id: string } }>(
    `${p}/workers/:id/heartbeat`,
    { config: worker, onRequest: own, bodyLimit: SMALL_BODY_BYTES, schema: { body: S.emptySchema } },
    async (req) => ctx.controller.heartbeat(req.worker!),
  );
  app.post<{ Params: { id: string }; Body: { reason: string } }>(
    `${p}/workers/:id/leave`,
    {
      config: worker,
      onRequest: authWorker(ctx, { mayBeGone: true }),
      bodyLimit: SMALL_BODY_BYTES,
      schema: { body: S.leaveSchema },
    },
    async (req) => {
      if (req.worker) ctx.controller.leave(req.worker.id, req.body.reason);
      return { ok: true };
    },
  );
}
