import type { State } from '../protocol/states.js';
import type { Ledger } from './ledger.js';

/**
 * The rows of `drover list`'s table, straight from SQLite: the column widths in one aggregate query, then the
 * rows as arrays a chunk of ids at a time, so a 100,000-task job is printed without holding its rows.
 */

/** Which of a job's tasks to show. */
export interface TaskFilter {
  ids?: readonly number[];
  states?: readonly State[];
}

/** One row: id, state, exit code, attempts, tag, command, params (JSON text of an object of strings). */
export type TableRow = [number, State, number | null, number, string, string, string];

/** Widest text of each short column, and the tags that are not plain printable ASCII (measured by the caller). */
export interface ColumnWidths {
  id: number;
  state: number;
  exit: number;
  attempts: number;
  /** Widest tag made of printable ASCII only (one column per character). */
  asciiTag: number;
  /** Tags with other characters (wide, combining, control): their display width is the caller's to measure. */
  otherTags: string[];
}

function where(filter: TaskFilter, table = ''): { sql: string; args: string[] } {
  const t = table === '' ? '' : `${table}.`;
  return {
    sql: [
      `${t}job_id = ?`,
      ...(filter.ids ? [`${t}id IN (SELECT value FROM json_each(?))`] : []),
      ...(filter.states ? [`${t}state IN (SELECT value FROM json_each(?))`] : []),
    ].join(' AND '),
    args: [
      ...(filter.ids ? [JSON.stringify(filter.ids)] : []),
      ...(filter.states ? [JSON.stringify(filter.states)] : []),
    ],
  };
}

/** A tag made only of printable ASCII (GLOB: no character outside space..tilde). */
const PLAIN_TAG = "tag NOT GLOB '*[^ -~]*'";

/** The column widths of a job's rows (one aggregate query; the tags that are not plain ASCII, listed). */
export function columnWidths(ledger: Ledger, jobId: number, filter: TaskFilter = {}): ColumnWidths {
  const w = where(filter);
  const r = ledger
    .stmt(
      `SELECT max(length(id)) AS id, max(length(state)) AS state, max(length(coalesce(exit_code, '-'))) AS exit,
       max(length(tries)) AS attempts, max(CASE WHEN ${PLAIN_TAG} THEN length(tag) ELSE 0 END) AS asciiTag
       FROM tasks WHERE ${w.sql}`,
    )
    .get(jobId, ...w.args) as Omit<ColumnWidths, 'otherTags'>;
  const otherTags = ledger
    .stmt(`SELECT DISTINCT tag FROM tasks WHERE ${w.sql} AND NOT (${PLAIN_TAG})`)
    .pluck()
    .all(jobId, ...w.args) as string[];
  return {
    id: r.id ?? 0,
    state: r.state ?? 0,
    exit: r.exit ?? 0,
    attempts: r.attempts ?? 0,
    asciiTag: r.asciiTag ?? 0,
    otherTags,
  };
}

/** A job's rows in id order, `size` at a time (by key: whatever ids the job has). */
export function* tableRows(
  ledger: Ledger,
  jobId: number,
  filter: TaskFilter = {},
  size = 10_000,
): Generator<TableRow[]> {
  const w = where(filter);
  // Its own SQL text, so raw mode never reaches a statement other code shares through the cache.
  const stmt = ledger
    .stmt(
      `SELECT id, state, exit_code, tries, tag, command, params FROM tasks WHERE ${w.sql} AND id > ? ORDER BY id LIMIT ?`,
    )
    .raw(true);
  let after = 0;
  for (;;) {
    const rows = stmt.all(jobId, ...w.args, after, size) as TableRow[];
    if (rows.length === 0) return;
    after = rows[rows.length - 1]![0];
    yield rows;
  }
}

/** A params column: its key, the widest plain-ASCII value, and the other values (the caller measures them). */
export interface ParamColumn {
  key: string;
  asciiWidth: number;
  otherValues: string[];
}

/**
 * The params keys of a job's rows in the order the sweep has them (first task that has a key, then the key's place
 * in that task's params), with what the widths need. One aggregate query over the params.
 */
export function paramColumns(ledger: Ledger, jobId: number, filter: TaskFilter = {}): ParamColumn[] {
  const w = where(filter, 't');
  const rows = ledger
    .stmt(
      `SELECT p.key AS key, min(t.id) AS first,
         max(CASE WHEN p.value NOT GLOB '*[^ -~]*' THEN length(p.value) ELSE 0 END) AS asciiWidth,
         json_group_array(DISTINCT CASE WHEN p.value GLOB '*[^ -~]*' THEN p.value END) AS other
       FROM tasks t, json_each(t.params) p WHERE ${w.sql}
       GROUP BY p.key`,
    )
    .all(jobId, ...w.args) as { key: string; first: number; asciiWidth: number; other: string }[];
  const firsts = new Map<number, string[]>();
  for (const r of rows) {
    if (firsts.has(r.first)) continue;
    const text = ledger
      .stmt('SELECT params FROM tasks WHERE job_id = ? AND id = ?')
      .pluck()
      .get(jobId, r.first);
    firsts.set(r.first, Object.keys(JSON.parse(String(text)) as object));
  }
  const place = (r: { key: string; first: number }) => firsts.get(r.first)!.indexOf(r.key);
  rows.sort((a, b) => a.first - b.first || place(a) - place(b));
  return rows.map((r) => ({
    key: r.key,
    asciiWidth: r.asciiWidth,
    otherValues: (JSON.parse(r.other) as (string | null)[]).filter((v): v is string => v !== null),
  }));
}
