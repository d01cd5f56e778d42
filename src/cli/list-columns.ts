import { usageError } from '../errors.js';
import type { TaskDetail } from '../ledger/task-details.js';
import { formatDuration } from './output.js';
import { cellText, cut } from './table.js';

/**
 * The columns `drover list` can show (`--columns`), each with its header and how a task's cell reads. The
 * default set is the table drover always printed; `duration`, `host` and `started` come from the latest attempt
 * (a join the default table does not pay for) and are there when asked.
 */
export const LIST_COLUMNS = [
  'job',
  'task',
  'state',
  'exit',
  'attempts',
  'tag',
  'params',
  'command',
  'duration',
  'host',
  'started',
] as const;

/** A column of the list table. */
export type ListColumn = (typeof LIST_COLUMNS)[number];

/**
 * `params` is not one column but one per key of the tasks' sweep values (`--lr`, `pos1`, ...), in the sweep's
 * order, `-` for a task without that key; none for a job with no params.
 */

/** Columns read from the latest attempt: asking for one of them makes the table join attempts. */
export const ATTEMPT_COLUMNS: ReadonlySet<ListColumn> = new Set(['duration', 'host', 'started']);

/** The columns of `drover list` without --columns, in order: all but the attempt columns. */
export const DEFAULT_COLUMNS: readonly ListColumn[] = LIST_COLUMNS.filter((c) => !ATTEMPT_COLUMNS.has(c));

/** Parse `--columns a,b,c`: known names, each once, at least one; exit 2 naming a bad one and the valid ones. */
export function parseColumns(text: string): ListColumn[] {
  const names = text.split(',').map((s) => s.trim());
  const valid = LIST_COLUMNS.join(', ');
  const seen = new Set<string>();
  for (const n of names) {
    if (n === '')
      throw usageError(`--columns '${cut(cellText(text), 40)}' has an empty name: use some of ${valid}`);
    if (!(LIST_COLUMNS as readonly string[]).includes(n))
      throw usageError(`--columns: '${cut(cellText(n), 40)}' is not a column: use some of ${valid}`);
    if (seen.has(n)) throw usageError(`--columns: '${n}' is named twice: name each column once`);
    seen.add(n);
  }
  return names as ListColumn[];
}

/** A start time as the table shows it: UTC, to the second (`2026-12-02 06:48:23`), or `-`. */
export function startedCell(seconds: number | null): string {
  return seconds === null
    ? '-'
    : new Date(Math.round(seconds * 1000)).toISOString().replace('T', ' ').slice(0, 19);
}

/** The text of one cell (control characters escaped, so a row stays on its line). */
export function columnCell(c: ListColumn, job: string, t: TaskDetail): string {
  switch (c) {
    case 'job':
      return job;
    case 'task':
      return String(t.id);
    case 'state':
      return t.state;
    case 'exit':
      return t.exit_code === null ? '-' : String(t.exit_code);
    case 'attempts':
      return String(t.attempts);
    case 'tag':
      return cellText(t.tag);
    case 'command':
      return cellText(t.command);
    case 'params':
      return ''; // one column per key: see list-table.ts
    case 'duration':
      return formatDuration(t.duration);
    case 'host':
      return t.host === null ? '-' : cellText(t.host);
    case 'started':
      return startedCell(t.started_at);
  }
}
