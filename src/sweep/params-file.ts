import { readFileSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { AtomicFile } from './atomic-file.js';
import type { TaskBatch } from './task-batch.js';
import type { JobEntry } from './types.js';

/**
 * The params file: each task's sweep values, written by prelaunch beside the jobfile (which stays onager's format
 * byte for byte), as `{"<id>": {"command": "<command>", "params": {"--lr": "0.1", ...}}, ...}`. The command ties
 * the values to the command they made (docs/concepts.md invariant 1): a task whose jobfile command is not the one
 * recorded here (onager rewrote the jobfile, someone edited it) has no params.
 */

/** One task's record in the params file. */
export interface ParamsRecord {
  /** The command these values made, exactly as prelaunch wrote it into the jobfile. */
  command: string;
  /** The sweep values, keyed by their names in the sweep. */
  params: Record<string, string>;
}

/** At most this many params per task: a sweep has a handful; more is a damaged or hostile file. */
export const MAX_PARAMS_PER_TASK = 1000;

/** The params file of a jobfile: `params.json` beside `jobs.json`, else `<name>.params.json` beside `<name>.json`. */
export function paramsFilePath(jobfile: string): string {
  const name = basename(jobfile);
  const stem = name === 'jobs.json' ? '' : `${name.replace(/\.json$/, '')}.`;
  return join(dirname(jobfile), `${stem}params.json`);
}

/** What reading a params file gave: the records by task id, and why it was ignored when it was. */
export interface ParamsRead {
  records: Map<number, ParamsRecord>;
  /** Set when the file exists but cannot be used (unreadable, not JSON, wrong shape, too big): it is ignored. */
  problem?: string;
}

/**
 * Read a params file no bigger than `maxBytes`. A missing file is no params (a job made by onager or by hand);
 * a file that cannot be used is no params and a `problem` saying why, never a throw.
 */
export function readParamsFile(file: string, maxBytes: number): ParamsRead {
  const none = new Map<number, ParamsRecord>();
  let text: string;
  try {
    const size = statSync(file).size;
    if (size > maxBytes)
      return { records: none, problem: `is ${size} bytes, more than its jobfile can explain` };
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { records: none };
    return { records: none, problem: `cannot be read (${code ?? String(err)})` };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { records: none, problem: 'is not valid JSON' };
  }
  if (!isPlainObject(parsed))
    return { records: none, problem: 'is not a JSON object of task id to its params' };
  const records = new Map<number, ParamsRecord>();
  for (const [key, value] of Object.entries(parsed)) {
    const id = /^[1-9][0-9]*$/.test(key) ? Number(key) : Number.NaN;
    const record = Number.isSafeInteger(id) ? toRecord(value) : undefined;
    if (!record)
      return {
        records: none,
        problem: `has task ${JSON.stringify(key.slice(0, 40))} that is not {command, params}`,
      };
    records.set(id, record);
  }
  return { records };
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function toRecord(value: unknown): ParamsRecord | undefined {
  if (!isPlainObject(value) || typeof value.command !== 'string' || !isPlainObject(value.params))
    return undefined;
  const entries = Object.entries(value.params);
  if (entries.length > MAX_PARAMS_PER_TASK || !entries.every(([, v]) => typeof v === 'string'))
    return undefined;
  return { command: value.command, params: Object.fromEntries(entries) as Record<string, string> };
}

/** The params file's text for these records, in the map's order, one task a line. */
export function serializeParamsFile(records: ReadonlyMap<number, ParamsRecord>): string {
  const lines: string[] = [];
  for (const [id, r] of records)
    lines.push(`"${id}": ${JSON.stringify({ command: r.command, params: r.params })}`);
  return lines.length === 0 ? '{}\n' : `{\n${lines.join(',\n')}\n}\n`;
}

/**
 * A params file written as its tasks come, in the text serializeParamsFile gives (one task a line), replacing
 * the old one atomically on `commit`. `params` is the JSON text of a task's values.
 */
export class ParamsFileWriter {
  private readonly file: AtomicFile;
  private empty = true;

  constructor(path: string) {
    this.file = new AtomicFile(path);
  }

  /** Add one task's record. */
  add(id: number, command: string, params: string): void {
    this.file.write(
      `${this.empty ? '{\n' : ',\n'}"${id}": {"command":${JSON.stringify(command)},"params":${params}}`,
    );
    this.empty = false;
  }

  /** Add a batch of tasks' records. */
  addBatch(batch: TaskBatch): void {
    if (batch.ids.length === 0) return;
    this.file.write(paramsRecordsText(batch, this.empty));
    this.empty = false;
  }

  /**
   * Hand the file over to another writer (a worker thread) that adds records after these with
   * paramsRecordsText: the temporary file's descriptor, and whether it has no record yet. Call `resume` once
   * that writer is done, then `commit` or `abort` here.
   */
  handOver(): { fd: number; empty: boolean } {
    return { fd: this.file.handOver(), empty: this.empty };
  }

  /** Take the file back from the writer it was handed to, which added records if `added`. */
  resume(added: boolean): void {
    if (added) this.empty = false;
  }

  /** Close the object and put the file in place. */
  commit(): void {
    this.file.write(this.empty ? '{}\n' : '\n}\n');
    this.file.commit();
  }

  /** Leave the params file as it was. */
  abort(): void {
    this.file.abort();
  }
}

/** A batch's params file records, one a line, opening the object when `first` (as ParamsFileWriter.add). */
export function paramsRecordsText(batch: TaskBatch, first: boolean): string {
  let text = '';
  for (let i = 0; i < batch.ids.length; i++)
    text += `${first && i === 0 ? '{\n' : ',\n'}"${batch.ids[i]}": {"command":${JSON.stringify(batch.commands[i])},"params":${batch.params[i]}}`;
  return text;
}

/** The params each jobfile entry has: the recorded values when the recorded command is its command, else none. */
export function paramsOfEntries(
  entries: ReadonlyMap<number, JobEntry>,
  records: ReadonlyMap<number, ParamsRecord>,
): Map<number, JobEntry & { params: string }> {
  const out = new Map<number, JobEntry & { params: string }>();
  for (const [id, e] of entries) {
    const r = records.get(id);
    out.set(id, { ...e, params: r && r.command === e.command ? JSON.stringify(r.params) : '{}' });
  }
  return out;
}

/** How big a params file a jobfile of `jobfileBytes` can explain: its commands again, plus the values. */
export function paramsFileLimit(jobfileBytes: number): number {
  return 1024 * 1024 + 8 * jobfileBytes;
}
