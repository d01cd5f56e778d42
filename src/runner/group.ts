import fs from 'node:fs';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { atPath } from '../files.js';
import { AtomicFile } from '../sweep/atomic-file.js';
import type { WarnSignal } from '../util/warn-signal.js';

/**
 * What one runner runs: its group of a launch's tasks and how to run them. A runner reads only this (from the
 * launch file) and writes only its record file and the tasks' logs.
 */
export interface GroupFile extends RunSettings {
  /** The group's key within the launch (`1` for a local launch; the array index for cluster launches). */
  group: string;
  /** Tasks in the order they should start: a list, or a task file read as the runner needs them. */
  tasks: TaskList;
}

/** A group's tasks in the order they start, and how many: an array, or a TaskFile. */
export interface TaskList extends Iterable<GroupTask> {
  readonly length: number;
}

/**
 * The launch file (`launch.json` in the launch folder), written once by the launching CLI: the settings every
 * runner of the launch shares, and each group's tasks by key.
 */
export interface LaunchFile extends RunSettings {
  groups: Record<string, GroupTask[] | TaskFileRef>;
}

/** A group whose tasks are in a task file of their own (a local launch's): its path beside the launch file. */
export interface TaskFileRef {
  file: string;
  count: number;
}

/** Settings shared by every runner of a launch. */
export interface RunSettings {
  v: 1;
  job: string;
  launch: number;
  /** Explicit slot count; omitted → CPUs available / cpusPerTask. */
  maxTasks?: number;
  cpusPerTask?: number;
  gpusPerTask?: number;
  /** Retries per task after a failed, killed or timed-out attempt. */
  retries: number;
  /** Seconds before the first retry (doubling, capped at 60 s, ±20% jitter). */
  retryDelay: number;
  /** Per-task time limit in seconds; omitted → none. */
  taskTimeout?: number;
  /** Seconds between SIGTERM and SIGKILL when stopping a task. */
  killGrace: number;
  /** `--signal`: each task gets this signal this many seconds before its time limit; omitted → none. */
  warnSignal?: WarnSignal;
  /**
   * `--requeue`: a task that hit `taskTimeout` or exited `requeueExit` runs again (a new attempt, DROVER_RESUME=1),
   * up to this many times, apart from its retries; omitted → never.
   */
  requeue?: number;
  /** The exit code by which a task asks to be requeued (75 unless the launch said). */
  requeueExit?: number;
  /**
   * Seconds the runner has from its start: a cluster element's time limit (`--duration`). A task's time limit
   * is the nearer of its own (`taskTimeout`) and this one's end; omitted → none.
   */
  runnerLimit?: number;
  /** Folder of the tasks' log files. */
  logDir: string;
  /**
   * How tasks' output is kept: `segments` (a few append-only files per runner slot, each attempt a byte range:
   * src/protocol/log-slices.ts) or `files` (two per attempt). Omitted: files (launch files written before there
   * was a choice).
   */
  logs?: LogsMode;
  /** Folder of the runners' record files. */
  recordsDir: string;
  /** Folder the CLI drops cancel requests into. */
  cancelDir: string;
  /** Shell snippets run before and after each command (from config). */
  header?: string;
  footer?: string;
  /** A virtualenv to activate for each command. */
  venv?: string;
  /** Extra environment for every task. */
  env?: Record<string, string>;
  /** Working directory of the tasks. */
  cwd: string;
  /**
   * What a SIGTERM to the runner means for the tasks it stops: `cancelled` (the user stopped a local launch) or
   * `killed` (a scheduler stopped the element: time limit, preemption; reconciliation may say `timeout`).
   */
  termState?: 'cancelled' | 'killed';
}

/** How tasks' output is kept (`--logs`). */
export type LogsMode = 'files' | 'segments';

/** One task in a group file. */
export interface GroupTask {
  id: number;
  command: string;
  /** Attempt number of its first run here. */
  attempt: number;
  /** Extra environment of this task only (pool workers: DROVER_JOB_RANK, DROVER_NUM_JOBS). */
  env?: Record<string, string>;
}

/** A cancel request dropped into the cancel folder: which tasks ('all' for every one). */
export interface CancelRequest {
  tasks: number[] | 'all';
  at: number;
}

/** Read a launch file and take one group from it (the only one when `key` is omitted). */
export function readGroup(file: string, key?: string): GroupFile {
  const { groups, ...settings } = JSON.parse(fs.readFileSync(file, 'utf8')) as LaunchFile;
  const keys = Object.keys(groups);
  const k = key ?? (keys.length === 1 ? keys[0]! : undefined);
  if (k === undefined) throw new Error(`${file} has ${keys.length} groups: say which with --group`);
  const tasks = groups[k];
  if (!tasks) throw new Error(`${file} has no group '${k}'`);
  if (Array.isArray(tasks)) return { ...settings, group: k, tasks };
  return {
    ...settings,
    group: k,
    tasks: new TaskFile(path.resolve(path.dirname(file), tasks.file), tasks.count),
  };
}

/** Bytes read from a task file at a time: the runner holds this much of it, whatever the group's size. */
const READ_BYTES = 1 << 20;

/**
 * A group's tasks kept in a file of their own, one JSON object (a GroupTask) per line, in the order they start:
 * how a local launch hands a million tasks to its runner without either holding them all. Iterating reads the
 * file a megabyte at a time; `length` is the count written beside it in the launch file.
 */
export class TaskFile implements TaskList {
  constructor(
    readonly path: string,
    readonly length: number,
  ) {}

  [Symbol.iterator](): TaskReader {
    return new TaskReader(this.path);
  }
}

/** Reads a task file's lines as they are asked for; `return` (or the end) closes it. */
export class TaskReader implements Iterator<GroupTask> {
  private fd: number;
  private readonly buf = Buffer.allocUnsafe(READ_BYTES);
  private lines: string[] = [];
  private at = 0;
  private rest = '';
  private readonly decoder = new StringDecoder('utf8');
  private line = 0;

  constructor(private readonly file: string) {
    this.fd = atPath(file, () => fs.openSync(file, 'r'));
  }

  next(): IteratorResult<GroupTask> {
    while (this.at === this.lines.length) {
      if (this.fd < 0) return { done: true, value: undefined };
      const n = atPath(this.file, () => fs.readSync(this.fd, this.buf, 0, this.buf.length, null));
      if (n === 0) {
        this.return();
        if (this.rest !== '')
          throw new Error(`${this.file}: line ${this.line + 1} has no end: the file is cut short`);
        return { done: true, value: undefined };
      }
      // A chunk may end inside a character (the decoder keeps its bytes for the next) or inside a line (kept).
      const text = this.rest + this.decoder.write(this.buf.subarray(0, n));
      const cut = text.lastIndexOf('\n');
      this.lines = cut < 0 ? [] : text.slice(0, cut).split('\n');
      this.rest = text.slice(cut + 1);
      this.at = 0;
    }
    this.line++;
    return { done: false, value: parseTask(this.lines[this.at++]!, this.file, this.line) };
  }

  return(): IteratorResult<GroupTask> {
    if (this.fd >= 0) fs.closeSync(this.fd);
    this.fd = -1;
    return { done: true, value: undefined };
  }
}

/** One line of a task file, checked: a task the runner could not run would otherwise fail deep inside it. */
function parseTask(line: string, file: string, n: number): GroupTask {
  let t: unknown;
  try {
    t = JSON.parse(line);
  } catch {
    throw new Error(`${file}: line ${n} is not JSON`);
  }
  const task = t as GroupTask;
  if (
    typeof t !== 'object' ||
    t === null ||
    !Number.isSafeInteger(task.id) ||
    typeof task.command !== 'string' ||
    !Number.isSafeInteger(task.attempt)
  )
    throw new Error(`${file}: line ${n} is not a task (id, command, attempt)`);
  return task;
}

/** Write a group's tasks as a task file, atomically: the file is there whole, or not at all. Returns the count. */
export function writeTaskFile(file: string, tasks: Iterable<GroupTask>): number {
  const out = new AtomicFile(file);
  let n = 0;
  try {
    for (const t of tasks) {
      out.write(`${JSON.stringify(t)}\n`);
      n++;
    }
  } catch (err) {
    out.abort();
    throw err;
  }
  out.commit();
  return n;
}
