import type { FastifyInstance } from 'fastify';
import { refresh } from '../backends/refresh.js';
import { loadJob } from '../launch/load-job.js';
import { jobStatus } from '../launch/status.js';
import { recordHistory } from '../ledger/history.js';
import { jobById } from '../ledger/jobs.js';
import { getLaunch, type LaunchRow } from '../ledger/launches.js';
import { openPoolLaunchesOfJob } from '../ledger/pools.js';
import { launchCounts } from '../ledger/queries.js';
import { listTaskDetails } from '../ledger/task-details.js';
import { taskJson } from '../ledger/task-json.js';
import { cancelPoolTasks } from '../ledger/transitions.js';
import { poolOf } from '../protocol/backend-ref.js';
import type {
  CancelRequest,
  CreateLaunchRequest,
  CreatePoolRequest,
  LaunchProgress,
  ScalePoolRequest,
} from '../protocol/messages.js';
import { API_PREFIX, API_VERSION } from '../protocol/messages.js';
import { parseTasklist } from '../tasklist/tasklist.js';
import { HttpError } from './http-error.js';
import { createPoolLaunch } from './launch-create.js';
import { getPool, type PoolContext } from './pool-row.js';
import { listPools, liveWorkerCount, poolStatus } from './pool-status.js';
import { createPool, downPool, resumePool, scalePool } from './pools.js';
import * as S from './schemas.js';

const user = { audience: 'user' as const };

/** The progress of a launch (tasks not expanded yet count as queued). */
function progress(ctx: PoolContext, l: LaunchRow): LaunchProgress {
  const counts = launchCounts(ctx.ledger, l.id);
  const made = Object.values(counts).reduce((a, b) => a + b, 0);
  counts.queued += Math.max(0, l.task_count - made);
  const live = ctx.controller.launches.get(l.id);
  const job = jobById(ctx.ledger, l.job_id)!;
  return {
    launch: String(l.id),
    jobname: job.name,
    pool: poolOf(l.backend)!,
    tasks: l.task_count,
    counts,
    open: live !== undefined,
    version: live?.version ?? -1,
    workers: liveWorkerCount(ctx, poolOf(l.backend)!),
  };
}

/** Register the user routes (user tokens). */
export function userRoutes(app: FastifyInstance, ctx: PoolContext, version: string): void {
  const p = API_PREFIX;
  app.get(`${p}/health`, { config: user }, async () => ({ ok: true, drover: version, api: API_VERSION }));

  app.get(`${p}/pools`, { config: user }, async () => listPools(ctx.ledger));
  app.post<{ Body: CreatePoolRequest }>(
    `${p}/pools`,
    { config: user, schema: { body: S.createPoolSchema } },
    async (req, reply) => reply.code(201).send(await createPool(ctx, req.body)),
  );
  app.get<{ Params: { name: string }; Querystring: { all?: string } }>(
    `${p}/pools/:name`,
    { config: user },
    async (req) => {
      getPool(ctx.ledger, req.params.name, false);
      return poolStatus(ctx, req.params.name, req.query.all === '1' || req.query.all === 'true');
    },
  );
  app.post<{ Params: { name: string }; Body: ScalePoolRequest }>(
    `${p}/pools/:name/scale`,
    { config: user, schema: { body: S.scalePoolSchema } },
    async (req) => scalePool(ctx, req.params.name, req.body.workers),
  );
  app.post<{ Params: { name: string } }>(`${p}/pools/:name/resume`, { config: user }, async (req) =>
    resumePool(ctx, req.params.name),
  );
  app.delete<{ Params: { name: string }; Querystring: { force?: string } }>(
    `${p}/pools/:name`,
    { config: user },
    async (req) => downPool(ctx, req.params.name, req.query.force === '1' || req.query.force === 'true'),
  );

  app.post<{ Body: CreateLaunchRequest }>(
    `${p}/launches`,
    { config: user, schema: { body: S.createLaunchSchema } },
    async (req, reply) => {
      const made = await createPoolLaunch(ctx.ledger, req.body, (pool) => liveWorkerCount(ctx, pool));
      if (made.launch !== null) {
        ctx.controller.loadLaunch(Number(made.launch));
        ctx.auto?.soon();
        req.log.info({
          event: 'launch',
          launch: made.launch,
          job: made.jobname,
          tasks: made.tasks,
          pool: req.body.pool,
        });
      }
      return reply.code(201).send(made);
    },
  );
  app.get<{ Params: { id: string }; Querystring: { since?: string; wait?: string } }>(
    `${p}/launches/:id`,
    { config: user },
    async (req) => {
      const l = /^\d+$/.test(req.params.id) ? getLaunch(ctx.ledger, Number(req.params.id)) : undefined;
      if (!l || poolOf(l.backend) === undefined) {
        throw new HttpError(404, 'not-found', `no pool launch ${req.params.id}: see drover status`);
      }
      if (req.query.since !== undefined) {
        const wait = Math.min(60, Math.max(0, Number(req.query.wait ?? 20))) * 1000;
        await ctx.controller.waitForChange(l.id, Number(req.query.since), wait);
      }
      return progress(ctx, getLaunch(ctx.ledger, l.id)!);
    },
  );

  app.get<{ Params: { name: string } }>(`${p}/jobs/:name/status`, { config: user }, async (req) =>
    jobStatus({ paths: ctx.ledger.paths, ledger: ctx.ledger }, req.params.name),
  );
  app.get<{ Params: { name: string } }>(`${p}/jobs/:name/tasks`, { config: user }, async (req, reply) => {
    const job = loadJob({ paths: ctx.ledger.paths, ledger: ctx.ledger }, req.params.name);
    refresh(ctx.ledger, job.id);
    const rows = listTaskDetails(ctx.ledger, job.id).map(taskJson);
    return reply.type('application/json').send(JSON.stringify(rows));
  });
  app.post<{ Params: { name: string }; Body: CancelRequest }>(
    `${p}/jobs/:name/cancel`,
    { config: user, schema: { body: S.cancelSchema } },
    async (req) => {
      const job = loadJob({ paths: ctx.ledger.paths, ledger: ctx.ledger }, req.params.name);
      const ids =
        req.body.tasklist !== undefined ? parseTasklist(req.body.tasklist, job.max_task, job.name) : 'all';
      const launches = openPoolLaunchesOfJob(ctx.ledger, job.id);
      const cancelled = ctx.ledger.write(() => {
        recordHistory(ctx.ledger, { kind: 'cancel', jobname: job.name, argv: ['cancel', job.name] });
        return launches.flatMap((l) => cancelPoolTasks(ctx.ledger, l, ids));
      });
      ctx.controller.processCancels();
      return {
        jobname: job.name,
        cancelled_at_once: cancelled.length,
        launches: launches.map((l) => String(l.id)),
      };
    },
  );
}
