import fs from 'node:fs';
import { usageError } from '../errors.js';
import { writeFileAtomic } from '../files.js';
import type { JobRow } from '../ledger/jobs.js';
import type { Ledger } from '../ledger/ledger.js';
import { type TaskDetail, taskDetailChunks } from '../ledger/task-details.js';
import type { TaskFilter } from '../ledger/task-filter.js';
import { paramColumns } from '../ledger/task-table.js';
import { outputSize } from '../protocol/log-slices.js';
import { shortHostname } from '../util/proc.js';
import { csvField } from './csv.js';
import { isoTime, JOBLOG_HEAD, joblogLine, numberCell, tsvField } from './export-format.js';
import { note } from './output.js';

/** `drover list --csv` / `--tsv`: which one. */
export type ExportFormat = 'csv' | 'tsv';

/** The columns of `list --csv` / `--tsv`, in order; one per params key follows them (list-export's writeDelimited). */
export const EXPORT_COLUMNS = [
  'job',
  'task',
  'state',
  'exit_code',
  'attempts',
  'started_at',
  'ended_at',
  'duration_s',
  'host',
  'tag',
  'command',
] as const;

function exportCells(job: string, t: TaskDetail): string[] {
  return [
    job,
    String(t.id),
    t.state,
    numberCell(t.exit_code),
    String(t.attempts),
    isoTime(t.started_at),
    isoTime(t.ended_at),
    numberCell(t.duration),
    t.host ?? '',
    t.tag,
    t.command,
  ];
}

/** How a line of cells reads in a format. */
function delimitedLine(format: ExportFormat): (cells: readonly string[]) => string {
  const field = format === 'csv' ? csvField : tsvField;
  const sep = format === 'csv' ? ',' : '\t';
  return (cells) => cells.map(field).join(sep);
}

/** The header line alone: the export of a folder with no jobs yet. */
export function writeDelimitedHead(format: ExportFormat): void {
  process.stdout.write(`${delimitedLine(format)(EXPORT_COLUMNS)}\n`);
}

/**
 * Write the tasks of `jobs` to stdout as CSV (RFC 4180 quoting) or TSV (escaped), a header then one line per
 * task, a chunk of tasks per write: 100,000 tasks never sit in memory at once.
 */
export function writeDelimited(
  ledger: Ledger,
  jobs: readonly { job: JobRow; filter: TaskFilter }[],
  format: ExportFormat,
): void {
  const line = delimitedLine(format);
  const keys = [
    ...new Set(jobs.flatMap(({ job, filter }) => paramColumns(ledger, job.id, filter).map((c) => c.key))),
  ];
  // A params key named like a column (hydra's `host=...`) is headed params.KEY, so no two columns share a name.
  const fixed = new Set<string>(EXPORT_COLUMNS);
  const heads = keys.map((k) => (fixed.has(k) ? `params.${k}` : k));
  process.stdout.write(`${line([...EXPORT_COLUMNS, ...heads])}\n`);
  for (const { job, filter } of jobs) {
    for (const chunk of taskDetailChunks(ledger, job.id, filter)) {
      if (chunk.length > 0)
        process.stdout.write(
          `${chunk
            .map((t) =>
              line([
                ...exportCells(job.name, t),
                ...keys.map((k) => (Object.hasOwn(t.params, k) ? t.params[k]! : '')),
              ]),
            )
            .join('\n')}\n`,
        );
    }
  }
}

/** Where `--joblog FILE` may write, checked before anything is read: one line naming the problem, exit 2. */
export function checkJoblogPath(file: string): void {
  if (file === '') throw usageError("--joblog '' names no file: give a path, or - for standard output");
  if (file === '-') return;
  if (/[\u0000-\u001f\u007f]/.test(file))
    throw usageError(`--joblog ${JSON.stringify(file)} has control characters: give a plain path`);
  let st: fs.Stats | undefined;
  try {
    st = fs.statSync(file);
  } catch {
    st = undefined;
  }
  if (st?.isDirectory()) throw usageError(`--joblog '${file}' is a folder: give a file path inside it`);
  const dir = file.includes('/') ? file.slice(0, file.lastIndexOf('/')) || '/' : '.';
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory())
    throw usageError(`--joblog '${file}': folder '${dir}' does not exist: create it first`);
}

/**
 * `--joblog FILE`: GNU parallel's joblog of a job's tasks, one line per task whose latest attempt finished
 * (Seq is the task id), written whole (a temp file renamed over FILE) or, for `-`, to stdout. A finished
 * attempt whose start was never recorded has no Starttime to give: it is left out, and said so on stderr.
 */
export function writeJoblog(ledger: Ledger, job: JobRow, filter: TaskFilter, file: string): void {
  const host = shortHostname();
  const lines = [JOBLOG_HEAD];
  const unknownStart: number[] = [];
  for (const chunk of taskDetailChunks(ledger, job.id, filter)) {
    for (const t of chunk) {
      if (t.ended_at === null) continue;
      if (t.started_at === null) {
        unknownStart.push(t.id);
        continue;
      }
      lines.push(
        joblogLine(
          {
            seq: t.id,
            host: t.host,
            started_at: t.started_at,
            duration: t.ended_at - t.started_at,
            received: outputSize({
              path: t.stdout_path,
              off: t.stdout_off,
              end: t.stdout_end,
              seq: t.log_seq,
            }),
            exit_code: t.exit_code,
            signal: t.signal,
            command: t.command,
          },
          host,
        ),
      );
    }
  }
  const text = `${lines.join('\n')}\n`;
  if (file === '-') process.stdout.write(text);
  else writeFileAtomic(file, text);
  if (unknownStart.length > 0) {
    note(
      `drover: ${unknownStart.length} task(s) left out of the joblog, their start unknown (a damaged record): ${unknownStart.slice(0, 10).join(', ')}${unknownStart.length > 10 ? ', ...' : ''}`,
    );
  }
}
