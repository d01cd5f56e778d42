import { type State, TERMINAL_STATES, zeroCounts } from '../protocol/states.js';
import { LATEST_ATTEMPT_JOIN } from './latest-attempt.js';
import type { Ledger } from './ledger.js';
import { ATTEMPT_LOG_COLUMNS, type AttemptLogs } from './queries.js';
import { taskWhere } from './task-filter.js';

/**
 * What the web dashboard reads (docs/dashboard.md): everything a page shows is computed here, in SQL, so a page of
 * a 100,000-task job costs the rows it shows and a few aggregates — never every task.
 */

/** One job in the jobs page. */
export interface JobOverview {
  name: string;
  created_at: number;
  tasks: number;
  counts: Record<State, number>;
  launches: number;
  /** Launches that may still change (their tasks queued or running). */
  open_launches: number;
  /** The latest thing that happened: the newest launch, first start or last end (unix seconds). */
  last_activity: number;
}

/** Every job, newest first, with its counts (from the count tables: one row per state, not per task). */
export function jobsOverview(ledger: Ledger): JobOverview[] {
  const rows = ledger
    .stmt(
      `SELECT j.id, j.name, j.created_at, j.task_count,
         (SELECT count(*) FROM launches l WHERE l.job_id = j.id) AS launches,
         (SELECT count(*) FROM launches l WHERE l.job_id = j.id AND l.open = 1) AS open_launches,
         max(j.created_at, coalesce((SELECT max(max(l.created_at, coalesce(l.first_start, 0), coalesce(l.last_end, 0)))
           FROM launches l WHERE l.job_id = j.id), 0)) AS last_activity
       FROM jobs j ORDER BY j.id DESC`,
    )
    .all() as {
    id: number;
    name: string;
    created_at: number;
    task_count: number;
    launches: number;
    open_launches: number;
    last_activity: number;
  }[];
  const counts = ledger.stmt('SELECT job_id, state, n FROM job_counts WHERE n > 0').all() as {
    job_id: number;
    state: State;
    n: number;
  }[];
  const byJob = new Map<number, Record<State, number>>();
  for (const c of counts) {
    const to = byJob.get(c.job_id) ?? zeroCounts();
    to[c.state] = c.n;
    byJob.set(c.job_id, to);
  }
  return rows.map((r) => ({
    name: r.name,
    created_at: r.created_at,
    tasks: r.task_count,
    counts: byJob.get(r.id) ?? zeroCounts(),
    launches: r.launches,
    open_launches: r.open_launches,
    last_activity: r.last_activity,
  }));
}

/**
 * A number that changes whenever what a job's pages show changes: its counts, its attempts (started or ended),
 * its launches (new, closed). Cheap enough to compute every second while a page watches (two index scans).
 */
export function jobSignature(ledger: Ledger, jobId: number): string {
  const counts = ledger
    .stmt("SELECT group_concat(state || ':' || n, ',') FROM job_counts WHERE job_id = ?")
    .pluck()
    .get(jobId) as string | null;
  const attempts = ledger
    .stmt('SELECT count(*), count(ended_at), max(started_at), max(ended_at) FROM attempts WHERE job_id = ?')
    .raw(true)
    .get(jobId) as unknown[];
  const launches = ledger
    .stmt('SELECT count(*), sum(open), max(id), max(last_end) FROM launches WHERE job_id = ?')
    .raw(true)
    .get(jobId) as unknown[];
  return JSON.stringify([counts, attempts, launches]);
}

/** A signature of every job's and pool's state (the jobs and pools pages). */
export function folderSignature(ledger: Ledger): string {
  return JSON.stringify([
    ledger.stmt("SELECT group_concat(job_id || state || ':' || n, ',') FROM job_counts").pluck().get(),
    ledger.stmt('SELECT count(*), sum(open), max(last_end) FROM launches').raw(true).get(),
    ledger.stmt("SELECT count(*), group_concat(state, ''), max(last_seen) FROM pool_workers").raw(true).get(),
    ledger.stmt("SELECT group_concat(name || state || workers, ',') FROM pools").pluck().get(),
  ]);
}

/** Columns the task table can be sorted by, as SQL over `tasks t` joined with its latest attempt `a`. */
const SORTS: Record<string, string> = {
  id: 't.id',
  state: 't.state',
  exit: 't.exit_code',
  attempts: 't.tries',
  duration: 'a.duration',
  host: 'a.host',
  started: 'a.started_at',
  ended: 'a.ended_at',
  tag: 't.tag',
  command: 't.command',
};

/** The sort keys (and `param:NAME`). */
export const TASK_SORTS: readonly string[] = Object.keys(SORTS);

/** Which tasks a page of the task table shows. */
export interface TaskPageQuery {
  /** Only this task. */
  id?: number;
  states?: readonly State[];
  /** Text that the command, tag or a param value contains (case-insensitive for ASCII). */
  text?: string;
  /** A key of TASK_SORTS, or `param:NAME` (numbers in numeric order). */
  sort: string;
  desc: boolean;
  offset: number;
  limit: number;
}

/** One row of the task table. */
export interface TaskPageRow {
  id: number;
  state: State;
  exit_code: number | null;
  attempts: number;
  tag: string;
  command: string;
  params: Record<string, string>;
  started_at: number | null;
  ended_at: number | null;
  duration_s: number | null;
  host: string | null;
  signal: string | null;
}

/** `%` and `_` taken literally in LIKE (with ESCAPE '\'). */
function likeText(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** The WHERE of a page query over `tasks t` and its arguments (the job's id first): taskWhere's, and the page's. */
function pageWhere(
  jobId: number,
  q: Pick<TaskPageQuery, 'id' | 'states' | 'text'>,
): { sql: string; args: unknown[] } {
  const w = taskWhere(q.states ? { states: q.states } : {}, 't');
  const parts = [w.sql];
  const args: unknown[] = [jobId, ...w.args];
  if (q.id !== undefined) {
    parts.push('t.id = ?');
    args.push(q.id);
  }
  if (q.text !== undefined && q.text !== '') {
    parts.push("(t.command LIKE ? ESCAPE '\\' OR t.tag LIKE ? ESCAPE '\\' OR t.params LIKE ? ESCAPE '\\')");
    const like = likeText(q.text);
    args.push(like, like, like);
  }
  return { sql: parts.join(' AND '), args };
}

/**
 * One page of a job's tasks, filtered and sorted in SQL, and how many tasks the filter matches. An unknown sort
 * key is the caller's to refuse (see TASK_SORTS); `param:NAME` sorts by that sweep value.
 */
export function taskPage(
  ledger: Ledger,
  jobId: number,
  q: TaskPageQuery,
): { total: number; rows: TaskPageRow[] } {
  const w = pageWhere(jobId, q);
  const total = ledger
    .stmt(`SELECT count(*) FROM tasks t WHERE ${w.sql}`)
    .pluck()
    .get(...w.args) as number;
  const dir = q.desc ? 'DESC' : 'ASC';
  let order: string;
  let sortValue = 'NULL';
  const sortArgs: unknown[] = [];
  if (q.sort.startsWith('param:')) {
    // The value of one key of the params object (bound, so any key is safe): numbers first, in numeric order,
    // then text in text order, then tasks without the key.
    sortValue = '(SELECT value FROM json_each(t.params) WHERE key = ?)';
    sortArgs.push(q.sort.slice('param:'.length));
    const isNumber = "(sortv GLOB '*[0-9]*' AND sortv NOT GLOB '*[^0-9.eE+-]*')";
    order = `sortv IS NULL, ${isNumber} DESC, CASE WHEN ${isNumber} THEN CAST(sortv AS REAL) END ${dir}, sortv ${dir}, t.id ${dir}`;
  } else {
    const col = SORTS[q.sort] ?? 't.id';
    order = col === 't.id' ? `t.id ${dir}` : `${col} IS NULL, ${col} ${dir}, t.id ${dir}`;
  }
  const rows = ledger
    .stmt(
      `SELECT t.id, t.state, t.exit_code, t.tries, t.tag, t.command, t.params,
         a.started_at, a.ended_at, round(a.duration, 3), a.host, a.signal, ${sortValue} AS sortv
       FROM tasks t ${LATEST_ATTEMPT_JOIN} WHERE ${w.sql} ORDER BY ${order} LIMIT ? OFFSET ?`,
    )
    .raw(true)
    .all(...sortArgs, ...w.args, q.limit, q.offset) as [
    number,
    State,
    number | null,
    number,
    string,
    string,
    string,
    number | null,
    number | null,
    number | null,
    string | null,
    string | null,
  ][];
  return {
    total,
    rows: rows.map((r) => ({
      id: r[0],
      state: r[1],
      exit_code: r[2],
      attempts: r[3],
      tag: r[4],
      command: r[5],
      params: JSON.parse(r[6]) as Record<string, string>,
      started_at: r[7],
      ended_at: r[8],
      duration_s: r[9],
      host: r[10],
      signal: r[11],
    })),
  };
}

/** One task's row, as the task table shows it (undefined when the job has no such task). */
export function taskRowById(ledger: Ledger, jobId: number, id: number): TaskPageRow | undefined {
  return taskPage(ledger, jobId, { id, sort: 'id', desc: false, offset: 0, limit: 1 }).rows[0];
}

/** The names of a job's params (from one task per distinct key set, not every task). */
export function paramNames(ledger: Ledger, jobId: number): string[] {
  return ledger
    .stmt(
      `SELECT DISTINCT k.key FROM (SELECT DISTINCT params FROM tasks WHERE job_id = ? LIMIT 1000) p, json_each(p.params) k
       ORDER BY k.key`,
    )
    .pluck()
    .all(jobId) as string[];
}

/** Attempts over time: how many ran at each moment, and how many had ended in each state by then. */
export interface Timeline {
  /** Bucket end times (unix seconds). */
  t: number[];
  running: number[];
  /** Cumulative ends per terminal state, one value per bucket. */
  ended: Record<string, number[]>;
}

/** The timeline of a job's attempts in `buckets` equal steps from its first start to its last event (or now). */
export function jobTimeline(ledger: Ledger, jobId: number, now: number, buckets = 120): Timeline | null {
  const span = ledger
    .stmt(
      `SELECT min(started_at), max(coalesce(ended_at, started_at)), count(*) - count(ended_at)
       FROM attempts WHERE job_id = ? AND started_at IS NOT NULL`,
    )
    .raw(true)
    .get(jobId) as [number | null, number | null, number];
  const [t0, last, runningNow] = span;
  if (t0 === null || last === null) return null;
  const t1 = Math.max(last, runningNow > 0 ? now : last, t0 + 1);
  const width = (t1 - t0) / buckets;
  const bucketOf = (col: string) => `min(${buckets - 1}, CAST((${col} - ?) / ? AS INTEGER))`;
  const starts = ledger
    .stmt(
      `SELECT ${bucketOf('started_at')} AS b, count(*) FROM attempts
       WHERE job_id = ? AND started_at IS NOT NULL GROUP BY b`,
    )
    .raw(true)
    .all(t0, width, jobId) as [number, number][];
  const ends = ledger
    .stmt(
      `SELECT ${bucketOf('ended_at')} AS b, state, count(*) FROM attempts
       WHERE job_id = ? AND started_at IS NOT NULL AND ended_at IS NOT NULL GROUP BY b, state`,
    )
    .raw(true)
    .all(t0, width, jobId) as [number, State, number][];
  const startAt = new Array<number>(buckets).fill(0);
  for (const [b, n] of starts) startAt[Math.max(0, b)]! += n;
  const endAt: Record<string, number[]> = {};
  const endsAll = new Array<number>(buckets).fill(0);
  for (const [b, state, n] of ends) {
    const at = Math.max(0, b);
    const row = endAt[state] ?? new Array<number>(buckets).fill(0);
    row[at]! += n;
    endAt[state] = row;
    endsAll[at]! += n;
  }
  const t: number[] = [];
  const running: number[] = [];
  const ended: Record<string, number[]> = {};
  const states = TERMINAL_STATES.filter((s) => endAt[s]);
  for (const s of states) ended[s] = [];
  let started = 0;
  let done = 0;
  const sums: Record<string, number> = {};
  for (let b = 0; b < buckets; b++) {
    started += startAt[b]!;
    done += endsAll[b]!;
    t.push(t0 + width * (b + 1));
    running.push(started - done);
    for (const s of states) {
      sums[s] = (sums[s] ?? 0) + endAt[s]![b]!;
      ended[s]!.push(sums[s]!);
    }
  }
  return { t, running, ended };
}

/** A histogram of a job's ended attempts' durations (seconds), in `bins` equal bins from the least to the most. */
export interface Histogram {
  min: number;
  max: number;
  width: number;
  counts: number[];
}

/** The durations of a job's ended attempts as a histogram (null when none ended). */
export function durationHistogram(ledger: Ledger, jobId: number, bins = 30): Histogram | null {
  const [min, max] = ledger
    .stmt('SELECT min(duration), max(duration) FROM attempts WHERE job_id = ? AND duration IS NOT NULL')
    .raw(true)
    .get(jobId) as [number | null, number | null];
  if (min === null || max === null) return null;
  const width = max > min ? (max - min) / bins : 1;
  const counts = new Array<number>(bins).fill(0);
  const rows = ledger
    .stmt(
      `SELECT min(${bins - 1}, CAST((duration - ?) / ? AS INTEGER)) AS b, count(*) FROM attempts
       WHERE job_id = ? AND duration IS NOT NULL GROUP BY b`,
    )
    .raw(true)
    .all(min, width, jobId) as [number, number][];
  for (const [b, n] of rows) counts[Math.max(0, b)]! += n;
  return { min, max, width, counts };
}

/** One attempt of a task, as the task page shows it. */
export interface TaskAttemptRow extends AttemptLogs {
  attempt: number;
  launch_id: number;
  backend: string;
  state: State;
  exit_code: number | null;
  signal: string | null;
  started_at: number | null;
  ended_at: number | null;
  duration_s: number | null;
  host: string | null;
  pid: number | null;
  reason: string | null;
  /** True when it ran the task's current command (an earlier command's attempts are history). */
  current: boolean;
}

/** Every attempt of a task, newest first. */
export function taskAttempts(ledger: Ledger, jobId: number, taskId: number): TaskAttemptRow[] {
  const rows = ledger
    .stmt(
      `SELECT a.attempt, a.launch_id, l.backend, a.state, a.exit_code, a.signal, a.started_at, a.ended_at,
         round(a.duration, 3) AS duration_s, a.host, a.pid, a.reason,
         ${ATTEMPT_LOG_COLUMNS.replace(/(\w+)/g, 'a.$1')}, (lt.revision = t.revision) AS current
       FROM attempts a JOIN launches l ON l.id = a.launch_id
         JOIN tasks t ON t.job_id = a.job_id AND t.id = a.task_id
         LEFT JOIN launch_tasks lt ON lt.launch_id = a.launch_id AND lt.task_id = a.task_id
       WHERE a.job_id = ? AND a.task_id = ? ORDER BY a.attempt DESC`,
    )
    .all(jobId, taskId) as (Omit<TaskAttemptRow, 'current'> & { current: number | null })[];
  return rows.map((r) => ({ ...r, current: r.current === 1 }));
}
