import type { TaskRow } from './jobs.js';
import type { LaunchRow } from './launches.js';
import type { Ledger } from './ledger.js';
import { STATES, type State, zeroCounts } from './states.js';

/** Count rows by state into a record with every state present. */
function countBy(rows: { state: State; n: number }[]): Record<State, number> {
  const counts = zeroCounts();
  for (const r of rows) counts[r.state] = r.n;
  return counts;
}

/** A job's tasks counted by their latest state. */
export function jobCounts(ledger: Ledger, jobId: number): Record<State, number> {
  return countBy(
    ledger.stmt('SELECT state, n FROM job_counts WHERE job_id = ?').all(jobId) as {
      state: State;
      n: number;
    }[],
  );
}

/** A launch's tasks counted by their state within that launch. */
export function launchCounts(ledger: Ledger, launchId: number): Record<State, number> {
  return countBy(
    ledger.stmt('SELECT state, n FROM launch_counts WHERE launch_id = ?').all(launchId) as {
      state: State;
      n: number;
    }[],
  );
}

/** When a launch's attempts started and ended, and how long they ran in total. */
export function launchTimes(
  ledger: Ledger,
  launchId: number,
): { first_start: number | null; last_end: number | null; busy: number | null } {
  return ledger.stmt('SELECT first_start, last_end, busy FROM launches WHERE id = ?').get(launchId) as {
    first_start: number | null;
    last_end: number | null;
    busy: number | null;
  };
}

/** The longest-running ended attempts of a job. */
export function slowestAttempts(
  ledger: Ledger,
  jobId: number,
  limit: number,
): { task: number; attempt: number; seconds: number; state: State }[] {
  return ledger
    .stmt(
      `SELECT task_id AS task, attempt, duration AS seconds, state FROM attempts
       WHERE job_id = ? AND duration IS NOT NULL ORDER BY job_id DESC, duration DESC LIMIT ?`,
    )
    .all(jobId, limit) as { task: number; attempt: number; seconds: number; state: State }[];
}

/** A job's tasks, optionally only some ids and states, in id order. */
export function listTasks(
  ledger: Ledger,
  jobId: number,
  filter: { ids?: readonly number[]; states?: readonly State[] } = {},
): TaskRow[] {
  const out: TaskRow[] = [];
  for (const chunk of taskChunks(ledger, jobId, filter)) out.push(...chunk);
  return out;
}

/**
 * A job's tasks as the JSON lines of `list --json` (taskJson's fields, in its order; `jobname` first when
 * given), a chunk of ids at a time, each chunk one string of lines joined by `,\n`. SQLite writes the JSON:
 * 100,000 tasks take ~0.25 s this way, against ~0.4 s for reading rows into JavaScript and stringifying them.
 */
export function* taskJsonChunks(
  ledger: Ledger,
  job: { id: number; name: string; task_count: number },
  filter: { ids?: readonly number[]; states?: readonly State[] } = {},
  withJobname = false,
  size = 20000,
): Generator<string> {
  const fields = `'task', id, 'command', command, 'tag', tag, 'state', state, 'exit_code', exit_code,
    'attempts', attempts, 'launch', CAST(last_launch_id AS TEXT)`;
  const where = [
    'job_id = ?',
    'id BETWEEN ? AND ?',
    ...(filter.ids ? ['id IN (SELECT value FROM json_each(?))'] : []),
    ...(filter.states ? ['state IN (SELECT value FROM json_each(?))'] : []),
  ].join(' AND ');
  const stmt = ledger
    .stmt(
      `SELECT group_concat(json_object(${withJobname ? `'jobname', ?, ` : ''}${fields}), ',' || char(10) ORDER BY id)
       FROM tasks WHERE ${where}`,
    )
    .pluck();
  const extra = [
    ...(filter.ids ? [JSON.stringify(filter.ids)] : []),
    ...(filter.states ? [JSON.stringify(filter.states)] : []),
  ];
  for (let first = 1; first <= job.task_count; first += size) {
    const text = stmt.get(...(withJobname ? [job.name] : []), job.id, first, first + size - 1, ...extra) as
      | string
      | null;
    if (text) yield text;
  }
}

type RawTask = [number, string, string, State, number | null, number, number | null];

/**
 * A job's tasks in id order, a chunk at a time. Rows come from SQLite as arrays and become objects here:
 * better-sqlite3 makes objects through V8's API at ~5 µs a row, arrays at about half that (100,000 tasks:
 * ~0.3 s instead of ~0.5 s, and less garbage).
 */
export function* taskChunks(
  ledger: Ledger,
  jobId: number,
  filter: { ids?: readonly number[]; states?: readonly State[] } = {},
  size = 5000,
): Generator<TaskRow[]> {
  const ids = filter.ids ? new Set(filter.ids) : undefined;
  const states = filter.states ? new Set(filter.states) : undefined;
  // Its own SQL text, so raw mode never reaches a statement other code shares through the cache.
  const stmt = ledger
    .stmt(
      'SELECT id, command, tag, state, exit_code, attempts, last_launch_id FROM tasks WHERE job_id = ? AND id > ? ORDER BY id LIMIT ?',
    )
    .raw(true);
  let after = 0;
  for (;;) {
    const rows = stmt.all(jobId, after, size) as RawTask[];
    if (rows.length === 0) return;
    after = rows[rows.length - 1]![0];
    const chunk: TaskRow[] = [];
    for (const r of rows) {
      if ((ids && !ids.has(r[0])) || (states && !states.has(r[3]))) continue;
      chunk.push({
        id: r[0],
        command: r[1],
        tag: r[2],
        state: r[3],
        exit_code: r[4],
        attempts: r[5],
        last_launch_id: r[6],
      });
    }
    yield chunk;
  }
}

/** Ids of a job's tasks whose state passes `pick`. */
export function taskIdsWhere(ledger: Ledger, jobId: number, pick: (s: State) => boolean): number[] {
  const states = STATES.filter(pick);
  return (
    ledger
      .stmt(
        `SELECT id FROM tasks INDEXED BY tasks_state WHERE job_id = ? AND state IN (${states.map(() => '?').join(', ')}) ORDER BY id`,
      )
      .all(jobId, ...states) as { id: number }[]
  ).map((r) => r.id);
}

/** The latest attempt of a task (or attempt `n`), with its log paths. */
export function taskAttempt(
  ledger: Ledger,
  jobId: number,
  taskId: number,
  n?: number,
):
  | {
      attempt: number;
      state: State;
      stdout_path: string | null;
      stderr_path: string | null;
      launch_id: number;
    }
  | undefined {
  const sql =
    n === undefined
      ? 'SELECT * FROM attempts WHERE job_id = ? AND task_id = ? ORDER BY attempt DESC LIMIT 1'
      : 'SELECT * FROM attempts WHERE job_id = ? AND task_id = ? AND attempt = ?';
  const args = n === undefined ? [jobId, taskId] : [jobId, taskId, n];
  return ledger.stmt(sql).get(...args) as ReturnType<typeof taskAttempt>;
}

/** The launches that include a task and where it is still queued or running. */
export function activeLaunchesOf(ledger: Ledger, jobId: number): LaunchRow[] {
  return ledger
    .stmt(
      `SELECT * FROM launches l WHERE job_id = ? AND open = 1 AND EXISTS
       (SELECT 1 FROM launch_tasks lt WHERE lt.launch_id = l.id AND lt.state IN ('queued', 'running')) ORDER BY id`,
    )
    .all(jobId) as LaunchRow[];
}
