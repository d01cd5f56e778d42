import os from 'node:os';
import { inertCell } from './inert-cell.js';

/**
 * Cell formats of `drover list --tsv` and `--joblog` (`--csv`'s fields are csv.ts's): pure functions over plain
 * values, so each rule is tested without a ledger.
 */

const TSV_SPECIAL = /[\t\n\r\\]/;
const TSV_ESCAPES: Record<string, string> = { '\t': '\\t', '\n': '\\n', '\r': '\\r', '\\': '\\\\' };

/**
 * One TSV field: made inert (inert-cell.ts), then tab, newline, carriage return and backslash written as `\t`
 * `\n` `\r` `\\`.
 */
export function tsvField(text: string): string {
  const cell = inertCell(text);
  return TSV_SPECIAL.test(cell) ? cell.replace(/[\t\n\r\\]/g, (c) => TSV_ESCAPES[c]!) : cell;
}

/** Unix seconds as ISO 8601 UTC with milliseconds (`2026-12-02T06:48:23.143Z`); empty when unknown. */
export function isoTime(seconds: number | null): string {
  return seconds === null ? '' : new Date(Math.round(seconds * 1000)).toISOString();
}

/** A number or nothing as a cell: empty when unknown. */
export function numberCell(n: number | null): string {
  return n === null ? '' : String(n);
}

/** The header of GNU parallel's joblog (`parallel --joblog FILE`), tab separated. */
export const JOBLOG_HEAD = 'Seq\tHost\tStarttime\tJobRuntime\tSend\tReceive\tExitval\tSignal\tCommand';

/** One finished attempt as a joblog line. */
export interface JoblogEntry {
  seq: number;
  host: string | null;
  started_at: number;
  duration: number;
  /** Bytes of the attempt's standard output (parallel's Receive). */
  received: number;
  exit_code: number | null;
  signal: string | null;
  command: string;
}

/**
 * A joblog line as GNU parallel writes it: Starttime `%.3f`, JobRuntime `%10.3f`, Send 0, Exitval 0 when a
 * signal ended it, Signal its number (0 for none), Host `:` for this machine (parallel's name for local jobs).
 * A line break in the command (parallel would write it raw, breaking the line) is written as `\n` / `\r`.
 */
export function joblogLine(e: JoblogEntry, thisHost: string): string {
  const host = e.host === null || e.host === thisHost ? ':' : e.host;
  const signal = signalNumber(e.signal);
  return [
    String(e.seq),
    host,
    e.started_at.toFixed(3),
    e.duration.toFixed(3).padStart(10),
    '0',
    String(e.received),
    String(e.exit_code ?? 0),
    String(signal),
    e.command.replace(/[\r\n]/g, (c) => (c === '\n' ? '\\n' : '\\r')),
  ].join('\t');
}

/** A signal's number from its name (`SIGKILL` → 9; a number as text stays that number); 0 for none. */
export function signalNumber(signal: string | null): number {
  if (signal === null || signal === '') return 0;
  if (/^\d+$/.test(signal)) return Number(signal);
  const name = (signal.startsWith('SIG') ? signal : `SIG${signal}`) as NodeJS.Signals;
  return os.constants.signals[name] ?? 0;
}
