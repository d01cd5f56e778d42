import { refresh } from '../../backends/refresh.js';
import { loadJob } from '../../launch/load-job.js';
import type { JobRow } from '../../ledger/jobs.js';
import type { Ledger } from '../../ledger/ledger.js';
import { API_PREFIX } from '../../protocol/messages.js';
import { STATES, type State } from '../../protocol/states.js';
import { validateJobname } from '../../sweep/index.js';
import { HttpError } from '../http-error.js';
import type { PoolContext } from '../pool-row.js';
import type { LiveHub } from './live.js';
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

/** The dashboard's routes' prefix. */
export const UI = `${API_PREFIX}/ui`;
/** A route's config: user tokens or sessions only. */
export const user = { audience: 'user' as const };

/** A whole number in [min, max] from a query string, or a 400 naming the value. */
export function intParam(
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
export function statesParam(value: string | undefined): State[] | undefined {
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
export function jobOf(ledger: Ledger, name: string, update: (jobId: number) => void): JobRow {
  try {
    validateJobname(name, 'job');
  } catch (err) {
    throw new HttpError(400, 'bad-request', (err as Error).message);
  }
  const job = loadJob({ paths: ledger.paths, ledger }, name);
  update(job.id);
  return job;
}

/**
 * Reads refresh through the live hub (at most once per its REFRESH_MS): a job page's redraw asks for the job,
 * its tasks and its chart at once, and the hub has often just refreshed to see the change that caused it.
 */
export const readRefresh = (d: DashboardContext) => (jobId: number) => d.live().refresh(jobId);

/** An action brings its job fully up to date first (runners' records, the scheduler). */
export const fullRefresh = (ledger: Ledger) => (jobId: number) => refresh(ledger, jobId);
