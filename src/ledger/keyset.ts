import type { Ledger } from './ledger.js';

/**
 * The one loop that walks a big query a chunk at a time (`list`'s table, its exports, `list --json` of some
 * tasks): by keyset, each chunk being the next rows whose key is above the previous chunk's last, along an index
 * of the key. A chunk then costs the same at the millionth row as at the first (an OFFSET would skip every row
 * before it again), gaps in the keys cost nothing, and no statement stays open between chunks, so the caller may
 * use the ledger while it walks.
 */

/** A query to walk by its key. */
export interface KeysetQuery {
  /** The columns, the key first. */
  select: string;
  /** The tables (`tasks t` and its joins). */
  from: string;
  /** Which rows (a taskWhere's `sql`), without the key's bound. */
  where: string;
  /** The key: an integer column above 0, unique among the rows (`t.id`). */
  key: string;
}

/** The SQL of one chunk of a query: its rows whose key is above a bound, in key order, up to a count (bound last). */
export function keysetPage(q: KeysetQuery): string {
  return `SELECT ${q.select} FROM ${q.from} WHERE ${q.where} AND ${q.key} > ? ORDER BY ${q.key} LIMIT ?`;
}

/**
 * The rows of `sql` as arrays, `size` at a time: `sql` is a keysetPage, or a query over one whose rows end with
 * the page's last key in their first column (an aggregate of the page: one row, its key NULL past the end). Its
 * arguments are `args`, then the bound and `size`. Ends at a chunk with no rows, or whose last key is NULL.
 */
export function* keysetChunks<Row extends readonly unknown[]>(
  ledger: Ledger,
  sql: string,
  args: readonly unknown[],
  size: number,
): Generator<Row[]> {
  const stmt = ledger.stmt(sql);
  let after = 0;
  for (;;) {
    // Raw again each time: another caller of this text between chunks gets it back in the default mode.
    const rows = stmt.raw(true).all(...args, after, size) as Row[];
    const last = rows[rows.length - 1]?.[0];
    if (typeof last !== 'number') return;
    yield rows;
    after = last;
  }
}
