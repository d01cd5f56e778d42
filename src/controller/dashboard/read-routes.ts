import type { FastifyInstance } from 'fastify';
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
import { jobLaunches } from '../../ledger/launches.js';
import { jobCounts, launchCounts, launchTimes } from '../../ledger/queries.js';
import type {
  ChartAnswer,
  JobAnswer,
  JobsAnswer,
  TaskAnswer,
  TaskPageAnswer,
} from '../../protocol/dashboard.js';
import { placeOf } from '../../protocol/log-slices.js';
import { HttpError } from '../http-error.js';
import { type DashboardContext, intParam, jobOf, readRefresh, statesParam, UI, user } from './context.js';
import { logTail } from './logs.js';
import { resultChart } from './result-chart.js';

/** Rows a page of the task table may ask for. */
const MAX_PAGE = 500;

/** Register the dashboard's reads: the jobs, a job, its tasks (a page of them, or one with its logs), its chart. */
export function readRoutes(app: FastifyInstance, d: DashboardContext): void {
  const read = readRefresh(d);

  app.get(`${UI}/jobs`, { config: user }, async (): Promise<JobsAnswer> => {
    const ledger = d.ledger();
    d.live().refresh(undefined);
    return { jobs: jobsOverview(ledger) };
  });

  app.get<{ Params: { name: string } }>(
    `${UI}/jobs/:name`,
    { config: user },
    async (req): Promise<JobAnswer> => {
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
    },
  );

  app.get<{
    Params: { name: string };
    Querystring: Record<string, string | undefined>;
  }>(`${UI}/jobs/:name/tasks`, { config: user }, async (req): Promise<TaskPageAnswer> => {
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
    async (req): Promise<TaskAnswer> => {
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
    async (req): Promise<ChartAnswer> => {
      const ledger = d.ledger();
      const { field, param } = req.query;
      if (!field || !param || field.length > 300 || param.length > 300) {
        throw new HttpError(400, 'bad-request', 'the chart needs field=RESULT_FIELD and param=PARAM');
      }
      const job = jobOf(ledger, req.params.name, read);
      return resultChart(ledger, job.id, field, param);
    },
  );
}
