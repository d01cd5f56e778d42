import fs from 'node:fs';

/** Processes as the FAKE schedulers see them: child links and signals, read from /proc. */

/** Direct children of process `pid`, every thread's (/proc/PID/task/TID/children); none once it is gone. */
function childrenOf(pid: number): number[] {
  let tids: string[];
  try {
    tids = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  const out: number[] = [];
  for (const tid of tids) {
    try {
      const text = fs.readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim();
      if (text !== '') for (const c of text.split(/\s+/)) out.push(Number(c));
    } catch {
      // the thread, or the process, is gone
    }
  }
  return out;
}

/** True while process `pid` lives (a zombie is gone). */
function alive(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat[stat.lastIndexOf(')') + 2] !== 'Z';
  } catch {
    return false;
  }
}

/**
 * Add to `tracked` every live descendant of its members, and drop those gone (Slurm's proctrack/linuxproc
 * follows parent links the same way; the fake keeps what it saw, so a process whose parent died is still stopped
 * with its element). It reads the children of the tracked processes only, not every process's parent: a
 * conformance file's job controllers spent a third of their CPU reading /proc/PID/stat of ~300 processes.
 */
export function trackDescendants(tracked: Set<number>): void {
  const queue = [...tracked];
  for (let pid = queue.pop(); pid !== undefined; pid = queue.pop()) {
    for (const c of childrenOf(pid)) {
      if (tracked.has(c)) continue;
      tracked.add(c);
      queue.push(c);
    }
  }
  for (const pid of tracked) if (!alive(pid)) tracked.delete(pid);
}

/** Send a signal to each pid (or process group, for negative ids); gone ones are skipped. */
export function signalAll(pids: Iterable<number>, signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}
