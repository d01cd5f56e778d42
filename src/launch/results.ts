import fs from 'node:fs';
import path from 'node:path';
import type { Ledger } from '../ledger/ledger.js';
import { resultSources } from '../ledger/results.js';
import { attemptFile, extentOf, type LogPlace, readRange } from '../protocol/log-slices.js';
import type { State } from '../protocol/states.js';
import { NotRegularFile, openTaskFile, readTaskFile } from '../util/task-file.js';
import type { ResultSource } from './spec.js';

/**
 * What tasks produced (`drover results`): each task's latest attempt's result, read from the file its runner
 * named in DROVER_RESULT_FILE (`<logDir>/<task>.<attempt>.result.json`, beside its `.out` log), or from the last
 * line of its stdout that is a JSON object when its launch said `--result stdout`. Pool workers write to the log
 * folder the controller chose, so the same paths hold for every backend.
 */

/** A result file (or the tail of stdout searched for one) is read up to this size; a bigger file is no result. */
export const MAX_RESULT_BYTES = 1024 * 1024;
/** A result nested deeper than this, or with more fields than MAX_RESULT_FIELDS, is no result. */
export const MAX_RESULT_DEPTH = 32;
export const MAX_RESULT_FIELDS = 1000;

/** A result: a JSON object as the task wrote it. */
export type ResultObject = Record<string, unknown>;

/** One task with its result, as `drover results --json` prints it. */
export interface TaskResult {
  task: number;
  state: State;
  tag: string;
  params: Record<string, string>;
  duration_s: number | null;
  /** The result, or null when the task left none (or left one that could not be used: see problems). */
  result: ResultObject | null;
}

/**
 * The tasks' results, the ones that could not be used (`task 3: ... is not a JSON object`), and what was odd in
 * results that are used (`task 4: fields "".loss and loss are both loss once flattened`).
 */
export interface Results {
  tasks: TaskResult[];
  problems: string[];
  warnings: string[];
}

/** Each task's result (one per task in id order), with what was wrong with those that could not be read. */
export function collectResults(
  ledger: Ledger,
  jobId: number,
  filter: { ids?: readonly number[]; states?: readonly State[] } = {},
): Results {
  const problems: string[] = [];
  const warnings: string[] = [];
  const tasks = resultSources(ledger, jobId, filter).map((row) => {
    const source: ResultSource = sourceOf(row.options);
    const out = row.stdout_path;
    const read =
      out === null || out === '' || row.attempt === null
        ? { result: null }
        : readResult(
            row.task,
            row.attempt,
            { path: out, off: row.stdout_off, end: row.stdout_end, seq: row.log_seq },
            source,
          );
    if (read.problem !== undefined) problems.push(`task ${row.task}: ${read.problem}`);
    if (read.result !== null) for (const w of oddities(read.result)) warnings.push(`task ${row.task}: ${w}`);
    return {
      task: row.task,
      state: row.state,
      tag: row.tag,
      params: JSON.parse(row.params) as Record<string, string>,
      duration_s: row.duration_s,
      result: read.result,
    };
  });
  return { tasks, problems, warnings };
}

function sourceOf(options: string | null): ResultSource {
  if (options === null) return 'file';
  try {
    return (JSON.parse(options) as { result?: unknown }).result === 'stdout' ? 'stdout' : 'file';
  } catch {
    return 'file';
  }
}

/**
 * The result file of an attempt whose stdout is in `out`: in the same log folder, whether `out` is the attempt's
 * own log (`3.1.out`) or its slot's segment (`3.1.result.json` either way).
 */
export function resultFileOf(out: string, task: number, attempt: number): string {
  return attemptFile(path.dirname(out), task, attempt, 'result');
}

/** An attempt's result: none when it left none, none and a problem when what it left cannot be used. */
export function readResult(
  task: number,
  attempt: number,
  stdout: LogPlace & { path: string },
  source: ResultSource,
): { result: ResultObject | null; problem?: string } {
  if (source === 'stdout') return lastJsonLine(stdout);
  const file = resultFileOf(stdout.path, task, attempt);
  let text: string;
  try {
    const read = readTaskFile(file, MAX_RESULT_BYTES);
    if ('tooBig' in read)
      return { result: null, problem: `${file} is ${read.tooBig} bytes, more than 1 MiB` };
    text = read.text;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { result: null };
    if (err instanceof NotRegularFile) return { result: null, problem: err.message };
    return { result: null, problem: `${file} cannot be read (${code ?? String(err)})` };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { result: null, problem: `${file} is not JSON` };
  }
  const why = unusable(parsed);
  return why === undefined ? { result: parsed as ResultObject } : { result: null, problem: `${file} ${why}` };
}

/** Why a parsed value is not a usable result, or undefined when it is one. */
function unusable(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'is not a JSON object';
  let fields = 0;
  const walk = (v: unknown, depth: number): boolean => {
    if (depth > MAX_RESULT_DEPTH) return false;
    if (typeof v !== 'object' || v === null) return ++fields <= MAX_RESULT_FIELDS;
    return Object.values(v).every((x) => walk(x, depth + 1));
  };
  return walk(value, 0)
    ? undefined
    : `is nested deeper than ${MAX_RESULT_DEPTH} or has more than ${MAX_RESULT_FIELDS} fields`;
}

/** The last line of an attempt's stdout (its last MiB) that is a JSON object; none when it has none. */
function lastJsonLine(stdout: LogPlace & { path: string }): {
  result: ResultObject | null;
  problem?: string;
} {
  const out = stdout.path;
  let fd: number | undefined;
  let text: string;
  try {
    fd = openTaskFile(out);
    const { start, end } = extentOf(fd, stdout, 'out');
    text = readRange(fd, Math.max(start, end - MAX_RESULT_BYTES), end).toString('utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { result: null };
    if (err instanceof NotRegularFile) return { result: null, problem: err.message };
    return { result: null, problem: `${out} cannot be read (${code ?? String(err)})` };
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
  const lines = text.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!.trim();
    if (!line.startsWith('{') || !line.endsWith('}')) continue;
    try {
      const parsed: unknown = JSON.parse(line);
      if (unusable(parsed) === undefined) return { result: parsed as ResultObject };
    } catch {
      // not JSON: an earlier line may be
    }
  }
  return { result: null };
}

/**
 * What is odd in a usable result, each a warning: a number too large for a double (`1e400`, which JSON.parse
 * makes Infinity) is set to null, so the table, --csv and --json all show it as no value; fields whose names
 * are the same once flattened with dots (`{"": {"loss": 9}, "loss": 10}`, `{"a.b": 1, "a": {"b": 2}}`) are
 * named, since the table shows only the last of them (--json keeps both).
 */
export function oddities(result: ResultObject): string[] {
  const out: string[] = [];
  const seen = new Map<string, string[]>();
  const walk = (value: Record<string, unknown>, prefix: string, raw: string) => {
    for (const [k, v] of Object.entries(value)) {
      const flat = prefix === '' ? k : `${prefix}.${k}`;
      const path = `${raw}${raw === '' ? '' : '.'}${JSON.stringify(k)}`;
      if (typeof v === 'object' && v !== null && !Array.isArray(v))
        walk(v as Record<string, unknown>, flat, path);
      else {
        seen.set(flat, [...(seen.get(flat) ?? []), path]);
        if (typeof v === 'number' && !Number.isFinite(v)) {
          value[k] = null;
          out.push(`field ${flat} is a number too large for a double: shown as null`);
        }
      }
    }
  };
  walk(result, '', '');
  for (const [flat, paths] of seen)
    if (paths.length > 1)
      out.push(`fields ${paths.join(' and ')} are all ${flat} once flattened: the table shows the last`);
  return out;
}
