import { readFileSync } from 'node:fs';
import { DroverError } from '../errors.js';
import { AtomicFile } from './atomic-file.js';
import { pythonJsonString, topLevelKeys } from './python-json.js';
import type { TaskBatch } from './task-batch.js';
import type { JobEntry, SweepTask } from './types.js';

const REWRITE = 'fix or remove it, or write a new one with drover prelaunch (without +append)';

/**
 * Read an onager/drover jobfile, `{"1": ["<command>", "<tag>"], ...}`, keeping the file's order (as onager's
 * json.load does). A missing, unreadable or malformed file is a DroverError with code 'conflict'.
 */
export function readJobfile(path: string): Map<number, JobEntry> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const message =
      code === 'ENOENT'
        ? `jobfile ${path} does not exist; write it with drover prelaunch first (without +append)`
        : `jobfile ${path} cannot be read (${code ?? String(err)}); check its permissions and that it is a file`;
    throw new DroverError('conflict', message, { cause: err });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    // V8 quotes the text it could not parse: never echo a file's contents (it may be any file, e.g. /etc/shadow).
    const why = (err instanceof Error ? err.message : String(err)).replace(
      /"(?:[^"\\]|\\.)*"(?:\.\.\.)?/g,
      '…',
    );
    throw new DroverError('conflict', `jobfile ${path} is not valid JSON (${why}); ${REWRITE}`, {
      cause: err,
    });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw corrupt(path, 'is not a JSON object of task id to [command, tag]');
  }
  const records = parsed as Record<string, unknown>;
  const jobs = new Map<number, JobEntry>();
  for (const key of topLevelKeys(text)) {
    const id = /^[0-9]+$/.test(key) ? Number(key) : Number.NaN;
    if (!Number.isSafeInteger(id) || id < 1)
      throw corrupt(path, `has key ${JSON.stringify(key)}, not a task id >= 1`);
    const record = records[key];
    if (!Array.isArray(record) || record.length !== 2 || !record.every((s) => typeof s === 'string')) {
      throw corrupt(path, `has task ${key} that is not [command, tag] (two strings)`);
    }
    jobs.set(id, { command: record[0] as string, tag: record[1] as string });
  }
  return jobs;
}

/**
 * The jobfile text exactly as onager writes it with Python's `json.dump(jobs, f)`: one line, `", "` and
 * `": "` separators, non-ASCII escaped, no trailing newline; entries in the map's order.
 */
export function serializeJobfile(entries: ReadonlyMap<number, JobEntry>): string {
  const parts: string[] = [];
  for (const [id, { command, tag }] of entries) {
    parts.push(`"${id}": [${pythonJsonString(command)}, ${pythonJsonString(tag)}]`);
  }
  return `{${parts.join(', ')}}`;
}

/** The existing entries followed by the new tasks, as onager builds the jobs dict for `+append`. */
export function addTasks(
  existing: ReadonlyMap<number, JobEntry>,
  tasks: readonly SweepTask[],
): Map<number, JobEntry> {
  const jobs = new Map(existing);
  for (const { id, command, tag } of tasks) jobs.set(id, { command, tag });
  return jobs;
}

/**
 * Replace the file at `path` with `text` atomically: write a temporary file in the same directory, fsync it,
 * rename it over `path`, then fsync the directory. Creates missing parent directories. Not a lock: callers
 * that read-modify-write must hold one.
 */
export function writeJobfileAtomic(path: string, text: string): void {
  const file = new AtomicFile(path);
  file.write(text);
  file.commit();
}

/**
 * A jobfile written as its tasks come, in onager's format byte for byte (as serializeJobfile): entries are
 * added in order, a batch at a time, and the file replaces the old one atomically on `commit`.
 */
export class JobfileWriter {
  private readonly file: AtomicFile;
  private empty = true;

  constructor(path: string) {
    this.file = new AtomicFile(path);
    this.file.write('{');
  }

  /** Add one entry. */
  add(id: number, { command, tag }: JobEntry): void {
    this.file.write(
      `${this.empty ? '' : ', '}"${id}": [${pythonJsonString(command)}, ${pythonJsonString(tag)}]`,
    );
    this.empty = false;
  }

  /** Add a batch of tasks' entries. */
  addBatch(batch: TaskBatch): void {
    if (batch.ids.length === 0) return;
    this.file.write(jobfileEntriesText(batch, this.empty));
    this.empty = false;
  }

  /**
   * Hand the file over to another writer (a worker thread) that adds entries after these with
   * jobfileEntriesText: the temporary file's descriptor, and whether it has no entry yet. Call `resume`
   * once that writer is done, then `commit` or `abort` here.
   */
  handOver(): { fd: number; empty: boolean } {
    return { fd: this.file.handOver(), empty: this.empty };
  }

  /** Take the file back from the writer it was handed to, which added entries if `added`. */
  resume(added: boolean): void {
    if (added) this.empty = false;
  }

  /** Close the object and put the file in place. */
  commit(): void {
    this.file.write('}');
    this.file.commit();
  }

  /** Leave the jobfile as it was. */
  abort(): void {
    this.file.abort();
  }
}

/** A batch's jobfile entries as onager writes them, `, `-separated (and after one when `first` is false). */
export function jobfileEntriesText(batch: TaskBatch, first: boolean): string {
  const parts: string[] = [];
  for (let i = 0; i < batch.ids.length; i++)
    parts.push(
      `"${batch.ids[i]}": [${pythonJsonString(batch.commands[i]!)}, ${pythonJsonString(batch.tags[i]!)}]`,
    );
  return (first ? '' : ', ') + parts.join(', ');
}

function corrupt(path: string, what: string): DroverError {
  return new DroverError('conflict', `jobfile ${path} ${what}; ${REWRITE}`);
}
