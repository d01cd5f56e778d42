import type { State } from '../protocol/states.js';
import type { TaskRow } from './jobs.js';
import { keysetChunks, keysetPage } from './keyset.js';
import { LATEST_ATTEMPT_JOIN, LATEST_DURATION } from './latest-attempt.js';
import type { Ledger } from './ledger.js';
import { type TaskFilter, taskWhere } from './task-filter.js';

/** A task with what its latest attempt (of its current command) says of when, where and how it ended. */
export interface TaskDetail extends TaskRow {
  /** Unix seconds the latest attempt started, or null (never ran, or its start was not recorded). */
  started_at: number | null;
  /** Unix seconds it ended, or null while it runs (or never ran). */
  ended_at: number | null;
  /** ended_at - started_at, or null when either is unknown. */
  duration: number | null;
  /** The host it ran on, or null. */
  host: string | null;
  /** The signal that ended it (SIGKILL, ...), or null. */
  signal: string | null;
  /** Its standard output's log file, when the runner said. */
  stdout_path: string | null;
  /** Where its stdout is in a segment (null: a file of its own, or none). */
  stdout_off: number | null;
  stdout_end: number | null;
  log_seq: number | null;
}

type Raw = [
  number,
  string,
  string,
  State,
  number | null,
  number,
  number | null,
  number | null,
  number | null,
  number | null,
  string | null,
  string | null,
  string | null,
  string,
  number | null,
  number | null,
  number | null,
  number,
];

/**
 * A job's tasks with their latest attempt's timings, host and signal, in id order, a chunk at a time (by key,
 * so gaps in the ids cost nothing). Rows come from SQLite as arrays and become objects here: better-sqlite3 makes
 * objects through V8's API at ~5 µs a row, arrays at about half that (100,000 tasks: ~0.3 s instead of ~0.5 s,
 * and less garbage).
 */
export function* taskDetailChunks(
  ledger: Ledger,
  jobId: number,
  filter: TaskFilter = {},
  size = 2000,
): Generator<TaskDetail[]> {
  const w = taskWhere(filter, 't');
  const page = keysetPage({
    select: `t.id, t.command, t.tag, t.state, t.exit_code, t.tries, t.last_launch_id,
      a.started_at, a.ended_at, ${LATEST_DURATION}, a.host, a.signal, a.stdout_path, t.params,
      a.stdout_off, a.stdout_end, a.log_seq, t.requeues`,
    from: `tasks t ${LATEST_ATTEMPT_JOIN}`,
    where: w.sql,
    key: 't.id',
  });
  for (const rows of keysetChunks<Raw>(ledger, page, [jobId, ...w.args], size)) {
    yield rows.map((r) => ({
      id: r[0],
      command: r[1],
      tag: r[2],
      state: r[3],
      exit_code: r[4],
      attempts: r[5],
      last_launch_id: r[6],
      started_at: r[7],
      ended_at: r[8],
      duration: r[9],
      host: r[10],
      signal: r[11],
      stdout_path: r[12],
      params: JSON.parse(r[13]) as Record<string, string>,
      stdout_off: r[14],
      stdout_end: r[15],
      log_seq: r[16],
      requeues: r[17],
    }));
  }
}

/** A job's tasks with their latest attempt's timings, all at once (the server's task list). */
export function listTaskDetails(ledger: Ledger, jobId: number, filter: TaskFilter = {}): TaskDetail[] {
  const out: TaskDetail[] = [];
  for (const chunk of taskDetailChunks(ledger, jobId, filter)) out.push(...chunk);
  return out;
}

/** What the widths of the attempt columns need: the hosts of the tasks' latest attempts, and the longest run. */
export function attemptColumnStats(
  ledger: Ledger,
  jobId: number,
  filter: TaskFilter = {},
): { hosts: string[]; maxDuration: number | null } {
  const w = taskWhere(filter, 't');
  const rows = ledger
    .stmt(
      `SELECT a.host AS host, max(${LATEST_DURATION}) AS longest FROM tasks t ${LATEST_ATTEMPT_JOIN}
       WHERE ${w.sql} GROUP BY a.host`,
    )
    .all(jobId, ...w.args) as { host: string | null; longest: number | null }[];
  return {
    hosts: rows.flatMap((r) => (r.host === null ? [] : [r.host])),
    maxDuration: rows.reduce<number | null>(
      (m, r) => (r.longest === null ? m : m === null ? r.longest : Math.max(m, r.longest)),
      null,
    ),
  };
}

/** The widest plain-ASCII command of a job's tasks, and the commands that are not plain ASCII. */
export function commandWidths(
  ledger: Ledger,
  jobId: number,
  filter: TaskFilter = {},
): { ascii: number; other: string[] } {
  const w = taskWhere(filter);
  const args = [jobId, ...w.args];
  const plain = "command NOT GLOB '*[^ -~]*'";
  const ascii = ledger
    .stmt(`SELECT max(CASE WHEN ${plain} THEN length(command) ELSE 0 END) FROM tasks WHERE ${w.sql}`)
    .pluck()
    .get(...args) as number | null;
  const other = ledger
    .stmt(`SELECT DISTINCT command FROM tasks WHERE ${w.sql} AND NOT (${plain})`)
    .pluck()
    .all(...args) as string[];
  return { ascii: ascii ?? 0, other };
}
