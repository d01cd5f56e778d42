import type { State } from '../protocol/states.js';
import { keysetChunks, keysetPage } from './keyset.js';
import type { Ledger } from './ledger.js';
import { type TaskFilter, taskWhere } from './task-filter.js';

/**
 * The rows of `drover list`'s table, straight from SQLite: the column widths in one aggregate query, then the
 * rows as arrays a chunk of ids at a time, so a 100,000-task job is printed without holding its rows.
 */

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

/** A tag made only of printable ASCII (GLOB: no character outside space..tilde). */
const PLAIN_TAG = "tag NOT GLOB '*[^ -~]*'";

/** The column widths of a job's rows (one aggregate query; the tags that are not plain ASCII, listed). */
export function columnWidths(ledger: Ledger, jobId: number, filter: TaskFilter = {}): ColumnWidths {
  const w = taskWhere(filter);
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
  const w = taskWhere(filter);
  const select = 'id, state, exit_code, tries, tag, command, params';
  const page = keysetPage({ select, from: 'tasks', where: w.sql, key: 'id' });
  yield* keysetChunks<TableRow>(ledger, page, [jobId, ...w.args], size);
}

/** A params column: its key, the widest plain-ASCII value, and the other values (the caller measures them). */
export interface ParamColumn {
  key: string;
  asciiWidth: number;
  otherValues: string[];
}

/**
 * The params keys of a job's rows in the order the sweep has them (the first task that has a key, then its place
 * in that task's params), with what the widths need: one pass over the params texts, parsed here (an aggregate
 * over json_each took ~0.16 s for 100,000 tasks, and ordered the keys only with more queries). Tasks with the same params text are read once.
 */
export function paramColumns(ledger: Ledger, jobId: number, filter: TaskFilter = {}): ParamColumn[] {
  const w = taskWhere(filter);
  const columns = new Map<string, { asciiWidth: number; other: Set<string> }>();
  let previous = '{}';
  const texts = ledger
    .stmt(`SELECT params FROM tasks WHERE ${w.sql} AND params != '{}' ORDER BY id`)
    .pluck()
    .iterate(jobId, ...w.args) as IterableIterator<string>;
  for (const text of texts) {
    if (text === previous) continue;
    previous = text;
    const params = JSON.parse(text) as Record<string, string>;
    for (const key in params) {
      const value = params[key]!;
      let c = columns.get(key);
      if (!c) {
        c = { asciiWidth: 0, other: new Set() };
        columns.set(key, c);
      }
      if (PLAIN_VALUE.test(value)) c.asciiWidth = Math.max(c.asciiWidth, value.length);
      else c.other.add(value);
    }
  }
  return [...columns].map(([key, c]) => ({ key, asciiWidth: c.asciiWidth, otherValues: [...c.other] }));
}

/** A value made of printable ASCII only (one column per character). */
const PLAIN_VALUE = /^[ -~]*$/;
