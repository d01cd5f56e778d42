import {
  allPids,
  isProcessAlive,
  isSameProcess,
  processEnv,
  processStat,
  selfAndAncestors,
} from '../../util/proc.js';

/**
 * Processes of local launches' tasks, found on this host by what drover put in their environment: every task of
 * a local launch carries `DROVER_LAUNCH_DIR` (its launch's folder, unique on the host), `DROVER_TASK_ID` and
 * `DROVER_ATTEMPT`, and so do the processes it starts. That finds them even when the runner died before it
 * recorded their start.
 */

/** The variable that names a task's launch (its folder). */
export const LAUNCH_DIR_VAR = 'DROVER_LAUNCH_DIR';

/** A live process of a task. */
export interface TaskProcess {
  pid: number;
  /** Its process group (a task leads its own; what it starts is in it unless it made another). */
  pgid: number;
  /** Its /proc start time, so a reused pid is never taken for it. */
  start: string;
  task: number;
  /** From its environment; 0 for a process known only by its recorded pid. */
  attempt: number;
}

/** Live processes of these launches (by folder), only of tasks in `tasks` when given. Never this process's line. */
export function taskProcesses(launchDirs: ReadonlySet<string>, tasks?: ReadonlySet<number>): TaskProcess[] {
  if (launchDirs.size === 0) return [];
  const skip = selfAndAncestors();
  const out: TaskProcess[] = [];
  for (const pid of allPids()) {
    if (skip.has(pid)) continue;
    const env = processEnv(pid, `${LAUNCH_DIR_VAR}=`);
    const dir = env?.get(LAUNCH_DIR_VAR);
    if (dir === undefined || !launchDirs.has(dir)) continue;
    const task = Number(env!.get('DROVER_TASK_ID'));
    if (!Number.isInteger(task) || (tasks && !tasks.has(task))) continue;
    const stat = processStat(pid);
    if (!stat || stat.state === 'Z' || stat.state === 'X') continue;
    out.push({
      pid,
      pgid: stat.pgid,
      start: stat.start,
      task,
      attempt: Number(env!.get('DROVER_ATTEMPT')) || 0,
    });
  }
  return out;
}

/** The process of a recorded attempt (its pid and recorded start), if it still runs. */
export function recordedProcess(task: number, pid: number, startedAt: number): TaskProcess | undefined {
  if (pid <= 0 || !isSameProcess(pid, startedAt)) return undefined;
  const stat = processStat(pid)!;
  return { pid, pgid: stat.pgid, start: stat.start, task, attempt: 0 };
}

/** Sleep without returning to the event loop (callers are inside a ledger transaction). */
function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * SIGKILL each process and its process group, then wait up to `ms` for them to be gone. Returns those still
 * running (a process in uninterruptible sleep, or one of another user).
 */
export function killAndWait(procs: readonly TaskProcess[], ms = 3000): TaskProcess[] {
  if (procs.length === 0) return [];
  const ownGroup = processStat(process.pid)?.pgid;
  for (const p of procs) {
    if (!isProcessAlive(p.pid, p.start)) continue;
    if (p.pgid > 1 && p.pgid !== ownGroup) signal(-p.pgid);
    signal(p.pid);
  }
  const deadline = Date.now() + ms;
  let left = procs.filter((p) => isProcessAlive(p.pid, p.start));
  while (left.length > 0 && Date.now() < deadline) {
    pause(20);
    left = left.filter((p) => isProcessAlive(p.pid, p.start));
  }
  return left;
}

function signal(target: number): void {
  try {
    process.kill(target, 'SIGKILL');
  } catch {
    // gone already, or not ours to signal
  }
}
