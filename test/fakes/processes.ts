import fs from 'node:fs';

/** Processes as the FAKE schedulers see them: parent links and signals, read from /proc. */

/** Parent pid of every live process (one read of /proc/PID/stat each: take it once for all elements of a tick). */
export function parents(): Map<number, number> {
  const out = new Map<number, number>();
  for (const name of fs.readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[0] !== 'Z') out.set(pid, Number(fields[1]));
    } catch {
      // gone
    }
  }
  return out;
}

/**
 * Add to `tracked` every live descendant of its members (Slurm's proctrack/linuxproc follows parent links the
 * same way; the fake keeps what it saw, so a process whose parent died is still stopped with its element).
 */
export function trackDescendants(tracked: Set<number>, ppid = parents()): void {
  let grew = true;
  while (grew) {
    grew = false;
    for (const [pid, parent] of ppid) {
      if (!tracked.has(pid) && tracked.has(parent)) {
        tracked.add(pid);
        grew = true;
      }
    }
  }
  for (const pid of tracked) if (!ppid.has(pid)) tracked.delete(pid);
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
