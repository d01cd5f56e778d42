import { execFile } from 'node:child_process';
import type { FastifyInstance } from 'fastify';
import { refresh } from '../../backends/refresh.js';
import { applyCancel, cancelPlan } from '../../launch/cancel.js';
import { loadJob } from '../../launch/load-job.js';
import { flattenResult } from '../../launch/result-table.js';
import { collectResults } from '../../launch/results.js';
import {
  durationHistogram,
  jobsOverview,
  jobTimeline,
  paramNames,
  TASK_SORTS,
  taskAttempts,
  taskPage,
  taskRowById,
} from '../../ledger/dashboard.js';
import { recordHistory } from '../../ledger/history.js';
import type { JobRow } from '../../ledger/jobs.js';
import { jobLaunches } from '../../ledger/launches.js';
import type { Ledger } from '../../ledger/ledger.js';
import { goneWorkers, liveWorkerRows } from '../../ledger/pool-workers.js';
import { findPool, listPoolRows } from '../../ledger/pools.js';
import { jobCounts, launchCounts, launchTimes } from '../../ledger/queries.js';
import { backendArgv } from '../../protocol/backend-ref.js';
import { placeOf } from '../../protocol/log-slices.js';
import { API_PREFIX } from '../../protocol/messages.js';
import { STATES, type State } from '../../protocol/states.js';
import { validateJobname } from '../../sweep/index.js';
import { parseTasklist } from '../../tasklist/tasklist.js';
import type { Controller } from '../controller.js';
import { HttpError } from '../http-error.js';
import type { PoolContext } from '../pool-row.js';
import { poolStatus } from '../pool-status.js';
import type { LiveHub } from './live.js';
import { loginRoutes } from './login-routes.js';
import { logTail } from './logs.js';
import type { Sessions } from './sessions.js';

/** What the dashboard's routes need: the ledger, the logins, the live hub; the controller when one runs. */
export interface DashboardContext {
  ledger: () => Ledger;
  sessions: Sessions;
  live: () => LiveHub;
  /** `drover ui`: pages only, no actions (no cancel, no rerun). */
  readOnly: boolean;
  /** The running controller (`drover server`), for live pool state and cancels; undefined for `drover ui`. */
  pools?: () => PoolContext;
  /** drover's node and entry script: a rerun runs `drover launch` as its own process. */
  drover?: { node: string; bin: string; cwd: string };
  version: string;
}

const UI = `${API_PREFIX}/ui`;
const user = { audience: 'user' as const };

/** Rows a page of the task table may ask for. */
const MAX_PAGE = 500;

/** A whole number in [min, max] from a query string, or a 400 naming the value. */
function intParam(
  value: string | undefined,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  if (value === undefined || value === '') return fallback;
  if (!/^\d{1,10}$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new HttpError(
      400,
      'bad-request',
      `${name}=${JSON.stringify(value)} is not a whole number from ${min} to ${max}`,
    );
  }
  return Number(value);
}

/** `state=failed,killed`: known states only. */
function statesParam(value: string | undefined): State[] | undefined {
  if (value === undefined || value === '') return undefined;
  const states = value.split(',');
  for (const s of states) {
    if (!(STATES as readonly string[]).includes(s)) {
      throw new HttpError(
        400,
        'bad-request',
        `state=${JSON.stringify(s)} is not a state: use ${STATES.join(', ')}`,
      );
    }
  }
  return states as State[];
}

/**
 * The job a route names, brought up to date by `update` (the live hub's throttled refresh for reads, a plain
 * refresh before an action), or a 404 / 400.
 */
function jobOf(ledger: Ledger, name: string, update: (jobId: number) => void): JobRow {
  try {
    validateJobname(name, 'job');
  } catch (err) {
    throw new HttpError(400, 'bad-request', (err as Error).message);
  }
  const job = loadJob({ paths: ledger.paths, ledger }, name);
  update(job.id);
  return job;
}

/** Register the dashboard: its page and files (public), the login, and its read and action routes (user). */
export function dashboardRoutes(app: FastifyInstance, d: DashboardContext): void {
  // Reads refresh through the live hub (at most once per its REFRESH_MS): a job page's redraw asks for the job,
  // its tasks and its chart at once, and the hub has often just refreshed to see the change that caused it.
  const read = (jobId: number) => d.live().refresh(jobId);
  const fresh = (ledger: Ledger) => (jobId: number) => refresh(ledger, jobId);
  loginRoutes(app, d.ledger, d.sessions);
  app.get(`${UI}/me`, { config: user }, async () => ({
    drover: d.version,
    read_only: d.readOnly,
    folder: d.ledger().paths.root,
  }));

  app.get(`${UI}/jobs`, { config: user }, async () => {
    const ledger = d.ledger();
    d.live().refresh(undefined);
    return { jobs: jobsOverview(ledger) };
  });

  app.get<{ Params: { name: string } }>(`${UI}/jobs/:name`, { config: user }, async (req) => {
    const ledger = d.ledger();
    const job = jobOf(ledger, req.params.name, read);
    const now = Date.now() / 1000;
    return {
      name: job.name,
      tasks: job.task_count,
      created_at: job.created_at,
      counts: jobCounts(ledger, job.id),
      params: paramNames(ledger, job.id),
      launches: jobLaunches(ledger, job.id).map((l) => {
        const { first_start, last_end } = launchTimes(ledger, l.id);
        return {
          id: l.id,
          backend: l.backend,
          tasklist: l.tasklist,
          tasks: l.task_count,
          created_at: l.created_at,
          open: l.open === 1,
          counts: launchCounts(ledger, l.id),
          first_start,
          last_end,
        };
      }),
      timeline: jobTimeline(ledger, job.id, now),
      histogram: durationHistogram(ledger, job.id),
    };
  });

  app.get<{
    Params: { name: string };
    Querystring: Record<string, string | undefined>;
  }>(`${UI}/jobs/:name/tasks`, { config: user }, async (req) => {
    const ledger = d.ledger();
    const q = req.query;
    const sort = q.sort ?? 'id';
    if (!TASK_SORTS.includes(sort) && !(sort.startsWith('param:') && sort.length < 300)) {
      throw new HttpError(
        400,
        'bad-request',
        `sort=${JSON.stringify(sort)} is not a column: use ${TASK_SORTS.join(', ')} or param:NAME`,
      );
    }
    if (q.dir !== undefined && q.dir !== 'asc' && q.dir !== 'desc') {
      throw new HttpError(400, 'bad-request', `dir=${JSON.stringify(q.dir)}: use asc or desc`);
    }
    if (q.q !== undefined && q.q.length > 1000) {
      throw new HttpError(400, 'bad-request', 'q is longer than 1000 characters: search for less');
    }
    const query = {
      sort,
      desc: q.dir === 'desc',
      offset: intParam(q.offset, 'offset', 0, 0, 1_000_000_000),
      limit: intParam(q.limit, 'limit', 100, 1, MAX_PAGE),
      ...(q.state !== undefined ? { states: statesParam(q.state) } : {}),
      ...(q.q !== undefined ? { text: q.q } : {}),
    };
    const job = jobOf(ledger, req.params.name, read);
    const page = taskPage(ledger, job.id, query);
    // Results only of the rows shown: reading every task's result file is for the chart, on demand.
    const results = collectResults(ledger, job.id, { ids: page.rows.map((r) => r.id) });
    const byTask = new Map(
      results.tasks.map((t) => [t.task, t.result ? Object.fromEntries(flattenResult(t.result)) : null]),
    );
    return { total: page.total, rows: page.rows.map((r) => ({ ...r, result: byTask.get(r.id) ?? null })) };
  });

  app.get<{ Params: { name: string; id: string }; Querystring: { attempt?: string } }>(
    `${UI}/jobs/:name/tasks/:id`,
    { config: user },
    async (req) => {
      const ledger = d.ledger();
      const id = intParam(req.params.id, 'task', 0, 1, 1_000_000_000);
      const job = jobOf(ledger, req.params.name, read);
      const task = taskRowById(ledger, job.id, id);
      if (!task) throw new HttpError(404, 'not-found', `task ${id} is not in job '${job.name}'`);
      const attempts = taskAttempts(ledger, job.id, id);
      const wanted =
        req.query.attempt === undefined ? undefined : intParam(req.query.attempt, 'attempt', 0, 1, 1_000_000);
      const shown = wanted === undefined ? attempts[0] : attempts.find((a) => a.attempt === wanted);
      if (wanted !== undefined && !shown) {
        throw new HttpError(404, 'not-found', `task ${id} of '${job.name}' has no attempt ${wanted}`);
      }
      const result = collectResults(ledger, job.id, { ids: [id] }).tasks[0]?.result ?? null;
      return {
        task,
        attempts,
        attempt: shown?.attempt ?? null,
        stdout: shown ? logTail(placeOf(shown, 'out'), 'out') : logTail(null),
        stderr: shown ? logTail(placeOf(shown, 'err'), 'err') : logTail(null),
        result,
      };
    },
  );

  app.get<{ Params: { name: string }; Querystring: { field?: string; param?: string } }>(
    `${UI}/jobs/:name/chart`,
    { config: user },
    async (req) => {
      const ledger = d.ledger();
      const { field, param } = req.query;
      if (!field || !param || field.length > 300 || param.length > 300) {
        throw new HttpError(400, 'bad-request', 'the chart needs field=RESULT_FIELD and param=PARAM');
      }
      const job = jobOf(ledger, req.params.name, read);
      return resultChart(ledger, job.id, field, param);
    },
  );

  const stream = { ...user, pageKeyInQuery: true };
  app.get<{ Querystring: { job?: string } }>(`${UI}/events`, { config: stream }, async (req, reply) => {
    const ledger = d.ledger();
    // No refresh here: the hub refreshes as it takes the stream's first signature.
    const jobId = req.query.job === undefined ? undefined : jobOf(ledger, req.query.job, () => {}).id;
    reply.hijack();
    d.live().add(reply.raw, jobId);
  });

  app.get(`${UI}/pools`, { config: user }, async () => {
    const ledger = d.ledger();
    const ctx = d.pools?.();
    const rows = listPoolRows(ledger);
    return {
      controller: ctx !== undefined,
      pools: rows.map((p) => {
        if (ctx && p.state === 'up') {
          const s = poolStatus(ctx, p.name, true);
          return { ...s, live: true };
        }
        // No controller here (drover ui): what the ledger last knew of the workers.
        const live = liveWorkerRows(ledger).filter((w) => w.pool === p.name);
        const created = findPool(ledger, p.name)?.created_at ?? 0;
        const gone = goneWorkers(ledger, p.name, created);
        return {
          name: p.name,
          backend: p.backend,
          state: p.state,
          workers_wanted: p.workers,
          live: false,
          workers: [
            ...live.map((w) => ({
              id: w.id,
              host: w.host,
              pid: w.pid,
              state: w.state,
              slots: w.slots,
              free_slots: null,
              tasks: [],
              seen_ago: Date.now() / 1000 - w.last_seen,
              reason: null,
            })),
            ...gone.map((w) => ({
              id: w.id,
              host: w.host,
              pid: w.pid,
              state: w.state,
              slots: w.slots,
              free_slots: 0,
              tasks: [],
              seen_ago: Date.now() / 1000 - w.last_seen,
              reason: w.reason,
            })),
          ],
          workers_gone: gone.length,
          gone_reasons: [...new Set(gone.map((g) => g.reason).filter((r) => r !== null))].slice(0, 5),
          queued: null,
          running: null,
        };
      }),
    };
  });

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
      schema: {
        body: {
          type: 'object',
          properties: { tasklist: { type: 'string', minLength: 1, maxLength: 100_000 } },
          additionalProperties: false,
        },
      },
    },
    async (req) => {
      action('cancel');
      const ledger = d.ledger();
      const job = jobOf(ledger, req.params.name, fresh(ledger));
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
  app.post<{ Params: { name: string } }>(`${UI}/jobs/:name/rerun-failed`, { config: user }, async (req) => {
    action('rerun');
    const ledger = d.ledger();
    const job = jobOf(ledger, req.params.name, fresh(ledger));
    const latest = jobLaunches(ledger, job.id).at(-1);
    if (!latest)
      throw new HttpError(409, 'conflict', `job '${job.name}' was never launched: launch it first`);
    if (!d.drover) throw new HttpError(403, 'read-only', 'this dashboard cannot start launches');
    const where = [...backendArgv(latest.backend), ...(latest.backend === 'local' ? ['--detach'] : [])];
    // The CLI's own launch, as its own process (argv, no shell): the launch outlives this request, and a
    // local one runs detached as `drover launch --detach` does.
    const out = await runDrover(d.drover, ['launch', job.name, '--failed', ...where, '--json']);
    return JSON.parse(out) as unknown;
  });
}

/** Wake the controller to act on cancels now (pool tasks held by workers). */
function wake(controller: Controller | undefined): void {
  controller?.processCancels();
}

/** The mean (and least, most, count) of a numeric result field for each value of a param, over the ended tasks. */
function resultChart(ledger: Ledger, jobId: number, field: string, param: string) {
  const groups = new Map<string, { n: number; sum: number; min: number; max: number }>();
  for (const t of collectResults(ledger, jobId, { states: ['succeeded'] }).tasks) {
    if (!t.result) continue;
    const v = flattenResult(t.result).get(field);
    const p = t.params[param];
    if (typeof v !== 'number' || !Number.isFinite(v) || p === undefined) continue;
    const g = groups.get(p) ?? { n: 0, sum: 0, min: v, max: v };
    g.n++;
    g.sum += v;
    g.min = Math.min(g.min, v);
    g.max = Math.max(g.max, v);
    groups.set(p, g);
  }
  const points = [...groups.entries()].map(([value, g]) => ({
    value,
    n: g.n,
    mean: g.sum / g.n,
    min: g.min,
    max: g.max,
  }));
  const numeric = points.every((p) => p.value.trim() !== '' && Number.isFinite(Number(p.value)));
  points.sort((a, b) => (numeric ? Number(a.value) - Number(b.value) : a.value < b.value ? -1 : 1));
  return { field, param, numeric, points };
}

/** Run drover (this same one) with argv; its stdout, or a 4xx/5xx with its one-line error. */
function runDrover(drover: { node: string; bin: string; cwd: string }, argv: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      drover.node,
      [drover.bin, ...argv],
      { cwd: drover.cwd, timeout: 120_000, maxBuffer: 16 << 20, env: { ...process.env, NO_COLOR: '1' } },
      (err, stdout, stderr) => {
        if (!err) return resolve(stdout);
        const line = stderr.trim().split('\n').at(-1) ?? String(err);
        const code = (err as { code?: unknown }).code;
        reject(
          new HttpError(
            code === 2 ? 400 : 502,
            code === 2 ? 'bad-request' : 'backend',
            line.replace(/^drover: (error: )?/, ''),
          ),
        );
      },
    );
  });
}
