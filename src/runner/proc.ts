import fs from 'node:fs';
import os from 'node:os';

/** The start time of a process (clock ticks since boot, from /proc/PID/stat), or null if it is gone. */
export function processStartTime(pid: number): string | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 2 (comm) may hold spaces and parentheses: split after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19] ?? null; // field 22 overall
  } catch {
    return null;
  }
}

/** True when the process `pid` on this host exists and, if `start` is given, is the same process as then. */
export function isProcessAlive(pid: number, start: string | null): boolean {
  const now = processStartTime(pid);
  if (now === null) return false;
  return start === null || now === start;
}

/** This host's short name, as runners record it. */
export function shortHostname(): string {
  return os.hostname().split('.')[0] ?? os.hostname();
}
