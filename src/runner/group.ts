import fs from 'node:fs';

/**
 * A group file: everything a runner needs to run its share of a launch, written by the launching CLI into the
 * launch folder. A runner reads only this file and writes only its record file and the tasks' logs.
 */
export interface GroupFile {
  v: 1;
  job: string;
  launch: number;
  /** Group number within the launch (1 for a local launch; array element for packed cluster launches). */
  group: number;
  /** Tasks in the order they should start. */
  tasks: GroupTask[];
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
}

/** One task in a group file. */
export interface GroupTask {
  id: number;
  command: string;
  /** Attempt number of its first run here. */
  attempt: number;
}

/** A cancel request dropped into the cancel folder: which tasks ('all' for every one). */
export interface CancelRequest {
  tasks: number[] | 'all';
  at: number;
}

/** Write a file atomically: temp file in the same folder, then rename. */
export function writeFileAtomic(file: string, text: string): void {
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  fs.writeFileSync(tmp, text);
  fs.renameSync(tmp, file);
}

/** Read a group file. */
export function readGroupFile(file: string): GroupFile {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as GroupFile;
}
