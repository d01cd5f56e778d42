import type { JobRow } from '../ledger/jobs.js';
import type { Ledger } from '../ledger/ledger.js';
import {
  attemptColumnStats,
  commandWidths,
  type TaskDetail,
  taskDetailChunks,
} from '../ledger/task-details.js';
import type { TaskFilter } from '../ledger/task-filter.js';
import { columnWidths, paramColumns, tableRows } from '../ledger/task-table.js';
import { ATTEMPT_COLUMNS, columnCell, type ListColumn } from './list-columns.js';
import { formatDuration } from './output.js';
import { cellText, cut, displayWidth, tableLine, writeLines } from './table.js';

/** Each job of the table with the tasks it shows. */
export type TableJobs = readonly { job: JobRow; filter: TaskFilter }[];

/**
 * `list` as a table: the widths from aggregate queries per job, then the rows a chunk at a time, each line made
 * once and written once. Linear in the tasks (cli-table3 took 34 s for 16,000, quadratically). With `fit` (the
 * terminal's width, when stdout is one) the last column is cut with `…` so no line is wider; piped, lines are
 * whole. No line ends in blanks.
 */
export function writeListTable(
  ledger: Ledger,
  jobs: TableJobs,
  columns: readonly ListColumn[],
  fit?: number,
): void {
  // `params` stands for one column per key of the sweep values, with its own width.
  const keys = columns.includes('params') ? paramKeyWidths(ledger, jobs) : new Map<string, number>();
  const names = [...keys.keys()];
  const fixed = tableWidths(ledger, jobs, columns);
  const widths = columns.flatMap((c, i) => (c === 'params' ? [...keys.values()] : [fixed[i]!]));
  if (widths.length === 0) return; // `--columns params` of tasks without params: no column to show
  const last = widths.length - 1;
  // What the columns before the last take: a space, the cell, three spaces (tableLine's layout).
  const before = widths.slice(0, last).reduce((n, w) => n + w + 4, 0) + 1;
  // A terminal narrower than the other columns gets `…` alone in the last (and wraps: nothing else would fit).
  const room = fit === undefined || fit <= 0 ? undefined : Math.max(1, fit - before);
  const line = (cells: string[]) => {
    if (room !== undefined) cells[last] = cut(cells[last]!, room);
    const text = tableLine(cells, widths);
    return cells[last] === '' ? text.trimEnd() : text;
  };
  writeLines([line(columns.flatMap((c) => (c === 'params' ? names.map(cellText) : [c])))]);
  const withAttempts = columns.some((c) => ATTEMPT_COLUMNS.has(c));
  for (const { job, filter } of jobs) {
    const name = cellText(job.name);
    for (const rows of withAttempts
      ? taskDetailChunks(ledger, job.id, filter)
      : plainRows(ledger, job.id, filter, names.length > 0)) {
      writeLines(
        rows.map((t) =>
          line(
            columns.flatMap((c) =>
              c === 'params'
                ? names.map((k) => (Object.hasOwn(t.params, k) ? cellText(t.params[k]!) : '-'))
                : [columnCell(c, name, t)],
            ),
          ),
        ),
      );
    }
  }
}

/** Each params key of the jobs' tasks, in the sweep's order, with its column's width. */
function paramKeyWidths(ledger: Ledger, jobs: TableJobs): Map<string, number> {
  const keys = new Map<string, number>();
  for (const { job, filter } of jobs)
    for (const c of paramColumns(ledger, job.id, filter)) {
      const width = c.otherValues.reduce((m, v) => Math.max(m, displayWidth(cellText(v))), c.asciiWidth);
      keys.set(c.key, Math.max(keys.get(c.key) ?? displayWidth(cellText(c.key)), width));
    }
  return keys;
}

/** The table's rows without the attempt columns: the tasks table alone, no join. */
function* plainRows(
  ledger: Ledger,
  jobId: number,
  filter: TaskFilter,
  withParams: boolean,
): Generator<TaskDetail[]> {
  for (const rows of tableRows(ledger, jobId, filter)) {
    yield rows.map(([id, state, exit_code, attempts, tag, command, params]) => ({
      id,
      state,
      exit_code,
      attempts,
      tag,
      command,
      last_launch_id: null,
      started_at: null,
      ended_at: null,
      duration: null,
      host: null,
      signal: null,
      stdout_path: null,
      stdout_off: null,
      stdout_end: null,
      log_seq: null,
      // Parsed only when the table shows params columns (100,000 parses are a good part of its time).
      params: withParams ? (JSON.parse(params) as Record<string, string>) : {},
    }));
  }
}

/** The width of each column: its header's or its widest cell's (the last column's is never used for padding). */
function tableWidths(ledger: Ledger, jobs: TableJobs, columns: readonly ListColumn[]): number[] {
  const widths = new Map<ListColumn, number>(columns.map((c) => [c, c.length]));
  const grow = (c: ListColumn, n: number) => {
    if (widths.has(c)) widths.set(c, Math.max(widths.get(c)!, n));
  };
  const lastColumn = columns[columns.length - 1];
  for (const { job, filter } of jobs) {
    const w = columnWidths(ledger, job.id, filter);
    grow('job', displayWidth(cellText(job.name)));
    grow('task', w.id);
    grow('state', w.state);
    grow('exit', w.exit);
    grow('attempts', w.attempts);
    grow(
      'tag',
      w.otherTags.reduce((m, t) => Math.max(m, displayWidth(cellText(t))), w.asciiTag),
    );
    if (widths.has('command') && lastColumn !== 'command') {
      const cw = commandWidths(ledger, job.id, filter);
      grow(
        'command',
        cw.other.reduce((m, t) => Math.max(m, displayWidth(cellText(t))), cw.ascii),
      );
    }
    if (columns.some((c) => ATTEMPT_COLUMNS.has(c))) {
      const a = attemptColumnStats(ledger, job.id, filter);
      grow(
        'host',
        a.hosts.reduce((m, h) => Math.max(m, displayWidth(cellText(h))), 1),
      );
      grow('duration', formatDuration(a.maxDuration).length);
      grow('started', 19);
    }
  }
  return columns.map((c) => widths.get(c)!);
}
