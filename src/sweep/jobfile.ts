import { randomBytes } from 'node:crypto';
import {
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { DroverError, isSystemError } from '../errors.js';
import { pythonJsonString, topLevelKeys } from './python-json.js';
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
  const dir = dirname(path);
  mkdirSync(dir, { recursive: true });
  const temp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  let fd = openSync(temp, 'wx', 0o644);
  try {
    const bytes = Buffer.from(text, 'utf8');
    for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done, bytes.length - done);
    fsyncSync(fd);
    closeSync(fd);
    fd = -1;
    renameSync(temp, path);
  } catch (err) {
    if (fd >= 0) closeSync(fd);
    rmSync(temp, { force: true });
    if (isSystemError(err)) err.path = path; // a write to the open file names no path
    throw err;
  }
  syncDirectory(dir);
}

function syncDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch {
    // Some filesystems refuse fsync on a directory; the rename itself has happened.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function corrupt(path: string, what: string): DroverError {
  return new DroverError('conflict', `jobfile ${path} ${what}; ${REWRITE}`);
}
