import { apiError, call, connect } from '../backends/pool/client.js';
import { readServerInfo } from '../backends/pool/server-info.js';
import type { LaunchSpec } from '../launch/spec.js';
import { toWire } from '../launch/wire.js';
import { poolRef } from '../protocol/backend-ref.js';
import { type ApiClient, ApiError } from '../protocol/client.js';
import type { LaunchCreated, LaunchProgress } from '../protocol/messages.js';
import { STATES } from '../protocol/states.js';
import { formatDuration, note, printJson } from './output.js';
import { openWorkspace } from './workspace.js';

/** How a pool launch is shown. */
export interface PoolShow {
  follow: boolean;
  json: boolean;
  quiet: boolean;
}

/**
 * `drover launch --pool NAME`: ONE request to the controller, whatever the number of tasks (the server resolves
 * the job and its tasks through the same launch path as every backend), answered with the launch id before
 * anything runs. `--follow` then shows live progress until the launch is done (exit 1 if a task did not succeed).
 */
export async function launchOnPool(spec: LaunchSpec, show: PoolShow): Promise<number> {
  const ws = openWorkspace();
  const api = connect(ws.paths);
  const t0 = process.hrtime.bigint();
  type NotMade = { launch: null; jobname: string; tasks: number; tasklist?: string; dry_run?: true };
  const made = await call<LaunchCreated | NotMade>(api, 'POST', '/launches', toWire(spec));
  const submitMs = Number(process.hrtime.bigint() - t0) / 1e6;
  if (made.launch === null) {
    if ('dry_run' in made) {
      if (show.json)
        printJson({
          jobname: made.jobname,
          launch: null,
          backend: spec.backend,
          dry_run: true,
          tasks: made.tasks,
          tasklist: made.tasklist,
          submissions: [],
          warnings: [],
        });
      else
        note(
          `would launch ${made.tasks} task(s) of job '${made.jobname}' on ${spec.backend}: tasklist ${made.tasklist}`,
        );
      return 0;
    }
    const what = spec.failed ? 'no failed tasks' : spec.unfinished ? 'no unfinished tasks' : 'no tasks';
    note(`drover: nothing to launch: job '${made.jobname}' has ${what}`);
    if (show.json) printJson({ jobname: made.jobname, launch: null, tasks: 0 });
    return 0;
  }
  const base = {
    jobname: made.jobname,
    launch: made.launch,
    backend: poolRef(made.pool),
    tasks: made.tasks,
    tasklist: made.tasklist,
    submit_ms: Math.round(submitMs * 100) / 100,
  };
  const talk = !show.json && !show.quiet;
  if (made.workers === 0 && !show.quiet) note(noWorkers(made.pool, made.auto === true));
  if (!show.follow) {
    if (show.json) printJson(base);
    else {
      note(
        `launch ${made.launch}: ${made.tasks} task(s) of '${made.jobname}' queued on pool ${made.pool}; follow with: drover status ${made.jobname}`,
      );
    }
    return 0;
  }
  if (talk) note(`launch ${made.launch}: ${made.tasks} task(s) of '${made.jobname}' on pool ${made.pool}`);
  const p = await follow(
    api,
    made.launch,
    talk,
    () => (process.env.DROVER_SERVER === undefined ? readServerInfo(ws.paths)?.url : undefined),
    made.auto === true,
  );
  if (show.json) printJson({ ...base, counts: p.counts });
  return p.counts.succeeded === p.tasks ? 0 : 1;
}

/** What to say when a pool has no live worker (`auto`: it starts some by itself). */
function noWorkers(pool: string, auto: boolean): string {
  if (auto)
    return `drover: pool ${pool} has no live worker yet: it starts workers as tasks queue (drover pool status ${pool})`;
  return `drover: pool ${pool} has no live worker: the tasks wait until one registers (drover pool status ${pool} --all; drover pool scale ${pool} --workers N)`;
}

/** How long --follow waits for a controller that went away (as workers do). */
const PATIENCE_MS = 600_000;

/**
 * Ask the controller, and when it is away (restarting, maybe on another port: `url()` re-reads server.json),
 * ask again with backoff until it is back, up to PATIENCE_MS.
 */
async function ask<T>(
  api: ApiClient,
  path: string,
  url: () => string | undefined,
  show: boolean,
): Promise<T> {
  let since: number | undefined;
  let delay = 100;
  for (;;) {
    try {
      const answer = await api.call<T>('GET', path);
      if (since !== undefined && show) note('drover: the server is back: following again');
      return answer;
    } catch (err) {
      const away = err instanceof ApiError && (err.status === 0 || err.status === 503);
      if (!away) throw apiError(err);
      if (since === undefined) {
        since = Date.now();
        if (show) note(`drover: lost the server (${err.message}): reconnecting`);
      } else if (Date.now() - since > PATIENCE_MS) {
        throw apiError(err);
      }
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(1000, delay * 2);
      api.url = url() ?? api.url;
    }
  }
}

/**
 * Print a progress line each time the launch changes (long-poll), until it is done; say so while its pool has no
 * live worker; ride out a restart of the controller.
 */
async function follow(
  api: ApiClient,
  id: string,
  show: boolean,
  url: () => string | undefined,
  auto: boolean,
): Promise<LaunchProgress> {
  const t0 = Date.now();
  let p = await ask<LaunchProgress>(api, `/launches/${id}`, url, show);
  let last = '';
  let idle = p.workers === 0;
  for (;;) {
    const line = STATES.filter((s) => p.counts[s]! > 0)
      .map((s) => `${s} ${p.counts[s]}`)
      .join(' · ');
    if (show && line !== last) {
      process.stderr.write(`${formatDuration((Date.now() - t0) / 1000).padStart(6)}  ${line}\n`);
      last = line;
    }
    if (!p.open) return p;
    if (p.workers === 0 && !idle && show) note(noWorkers(p.pool, auto));
    idle = p.workers === 0;
    // At most a few updates a second: each answer counts the launch's tasks.
    await new Promise((r) => setTimeout(r, 300));
    p = await ask<LaunchProgress>(api, `/launches/${id}?since=${p.version}&wait=20`, url, show);
  }
}
