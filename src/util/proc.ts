import fs from 'node:fs';
import os from 'node:os';

/** What /proc/PID/stat says of a process that drover needs. */
export interface ProcessStat {
  /** One letter: R, S, D, Z (zombie), T, ... */
  state: string;
  ppid: number;
  pgid: number;
  /** Clock ticks since boot when it started: with the pid, it names one process for good. */
  start: string;
}

/** Fields of /proc/PID/stat, or null if the process is gone. */
export function processStat(pid: number): ProcessStat | null {
  let stat: string;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // Field 2 (comm) may hold spaces and parentheses: split after its closing parenthesis (field 3 on).
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { state: f[0] ?? '?', ppid: Number(f[1]), pgid: Number(f[2]), start: f[19] ?? '' };
}

/** The start time of a process (clock ticks since boot, from /proc/PID/stat), or null if it is gone. */
export function processStartTime(pid: number): string | null {
  return processStat(pid)?.start ?? null;
}

/** True while a process runs: it exists and is not a zombie (ended, not yet reaped). */
export function isRunning(stat: ProcessStat | null): stat is ProcessStat {
  return stat !== null && stat.state !== 'Z' && stat.state !== 'X';
}

/** True when the process `pid` on this host runs and, if `start` is given, is the same process as then. */
export function isProcessAlive(pid: number, start: string | null): boolean {
  const stat = processStat(pid);
  return isRunning(stat) && (start === null || stat.start === start);
}

/** Clock ticks per second of /proc's times (USER_HZ: 100 on every Linux). */
const TICKS_PER_SECOND = 100;

/** When a process started, in Unix seconds (to within a tick), or null if it is gone. */
export function processStartedAt(pid: number): number | null {
  const stat = processStat(pid);
  if (!stat) return null;
  let uptime: number;
  try {
    uptime = Number(fs.readFileSync('/proc/uptime', 'utf8').split(' ')[0]);
  } catch {
    return null;
  }
  const boot = Date.now() / 1000 - uptime;
  return boot + Number(stat.start) / TICKS_PER_SECOND;
}

/**
 * True when the running process `pid` is the one recorded as started at `startedAt` (Unix seconds, taken just
 * after it was started). The kernel gives a pid to a new process only after the old one ended, which is after
 * it started: a process with this pid that started no later than the record (within ticks and rounding) is it.
 */
export function isSameProcess(pid: number, startedAt: number): boolean {
  if (!isRunning(processStat(pid))) return false;
  const at = processStartedAt(pid);
  return at !== null && at <= startedAt + 0.5;
}

/**
 * The environment a process was started with (/proc/PID/environ), or null if unreadable; also null when it
 * lacks `needle` (a quick test before the parse, for scans of every process).
 */
export function processEnv(pid: number, needle?: string): Map<string, string> | null {
  let raw: string;
  try {
    raw = fs.readFileSync(`/proc/${pid}/environ`, 'utf8');
  } catch {
    return null;
  }
  if (needle !== undefined && !raw.includes(needle)) return null;
  const env = new Map<string, string>();
  for (const kv of raw.split('\0')) {
    const i = kv.indexOf('=');
    if (i > 0) env.set(kv.slice(0, i), kv.slice(i + 1));
  }
  return env;
}

/** Pids of every process on this host that /proc shows. */
export function allPids(): number[] {
  let names: string[];
  try {
    names = fs.readdirSync('/proc');
  } catch {
    return [];
  }
  const pids: number[] = [];
  for (const name of names) {
    const pid = Number(name);
    if (Number.isInteger(pid) && pid > 0) pids.push(pid);
  }
  return pids;
}

/** This process and its ancestors: the processes a clean-up run from inside a task must never stop. */
export function selfAndAncestors(): Set<number> {
  const out = new Set<number>();
  let pid = process.pid;
  while (pid > 1 && !out.has(pid)) {
    out.add(pid);
    pid = processStat(pid)?.ppid ?? 0;
  }
  return out;
}

/** This host's short name, as runners record it. */
export function shortHostname(): string {
  return os.hostname().split('.')[0] ?? os.hostname();
}
