import fs from 'node:fs';

export { writeFileAtomic } from '../files.js';

/**
 * What one runner runs: its group of a launch's tasks and how to run them. A runner reads only this (from the
 * launch file) and writes only its record file and the tasks' logs.
 */
export interface GroupFile extends RunSettings {
  /** The group's key within the launch (`1` for a local launch; the array index for cluster launches). */
  group: string;
  /** Tasks in the order they should start. */
  tasks: GroupTask[];
}

/**
 * The launch file (`launch.json` in the launch folder), written once by the launching CLI: the settings every
 * runner of the launch shares, and each group's tasks by key.
 */
export interface LaunchFile extends RunSettings {
  groups: Record<string, GroupTask[]>;
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
  return { ...settings, group: k, tasks };
}
