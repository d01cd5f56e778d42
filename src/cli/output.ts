import Table from 'cli-table3';
import { DroverError, isSystemError, toDroverError } from '../errors.js';
import { ledgerError } from '../ledger/open.js';

/**
 * The one output layer: data to stdout (a table for people, JSON with --json), messages and progress to
 * stderr, errors as one line `drover: ...`.
 */

/**
 * Print a value as JSON on stdout. Arrays (task lists, history: maybe 100,000 entries) print one compact object
 * per line, which stays readable and costs a fraction of indenting every field; objects print indented.
 */
export function printJson(value: unknown): void {
  if (Array.isArray(value)) {
    process.stdout.write(
      value.length === 0 ? '[]\n' : `[\n${value.map((v) => JSON.stringify(v)).join(',\n')}\n]\n`,
    );
    return;
  }
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Print rows as a table with a header on stdout. */
export function printTable(head: string[], rows: (string | number)[][]): void {
  const table = new Table({ head, style: { head: [], border: [] }, chars: PLAIN });
  table.push(...rows.map((r) => r.map(String)));
  process.stdout.write(`${table.toString()}\n`);
}

/** A note for people on stderr. */
export function note(message: string): void {
  process.stderr.write(`${message}\n`);
}

/**
 * Print an error as one line on stderr and return the exit code it calls for. A failed system call (disk full,
 * read-only, permission denied, I/O error) or a ledger SQLite refused names the path and what to do; a stack
 * trace only for a bug, and only with DROVER_DEBUG set.
 */
export function reportError(err: unknown): number {
  const e = toDroverError(ledgerError(err) ?? err);
  const line = e.message.split('\n')[0];
  process.stderr.write(`drover: ${line}\n`);
  if (process.env.DROVER_DEBUG && e.cause instanceof Error) process.stderr.write(`${e.cause.stack}\n`);
  return e instanceof DroverError ? e.exitCode : 1;
}

/**
 * Errors nobody caught (thrown in a timer or callback, a promise nobody awaited) end the process as any other
 * error does: one line on stderr, not Node's stack trace. Output that cannot be written is no such error:
 * stdout to a reader that stopped early (drover list | head) ends the command quietly, stdout to a full disk
 * is one line, and stderr that cannot be written (a runner's log on a full disk) is dropped: there is nowhere
 * to say so, and a runner must go on recording its tasks.
 */
export function handleProcessErrors(): void {
  process.on('uncaughtException', (err) => {
    process.exitCode = reportError(err);
    process.exit();
  });
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    if (isSystemError(err)) err.path ??= 'standard output';
    throw err;
  });
  process.stderr.on('error', () => {});
}

/** Table borders: light rules only, readable in any terminal and in logs. */
const PLAIN = {
  top: '',
  'top-mid': '',
  'top-left': '',
  'top-right': '',
  bottom: '',
  'bottom-mid': '',
  'bottom-left': '',
  'bottom-right': '',
  left: '',
  'left-mid': '',
  mid: '',
  'mid-mid': '',
  right: '',
  'right-mid': '',
  middle: '  ',
};

/** Seconds as a short duration: `850ms`, `12.3s`, `4m05s`, `2h03m`. */
export function formatDuration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return '-';
  if (seconds < 1) return `${Math.round(seconds * 1000)}ms`;
  if (seconds < 60) return `${seconds.toFixed(1)}s`;
  const s = Math.round(seconds);
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}
