import fs from 'node:fs';
import path from 'node:path';
import { writeFileAtomic } from '../../files.js';
import type { LaunchRow } from '../../ledger/launches.js';
import type { CancelRequest } from '../../runner/group.js';
import { isProcessAlive, shortHostname } from '../../util/proc.js';

/** The local backend's handles: the runner process running the launch. */
export interface LocalHandles {
  host: string;
  pid: number;
  pid_start: string | null;
}

export function handles(launch: LaunchRow): LocalHandles | undefined {
  const h = JSON.parse(launch.handles) as Partial<LocalHandles>;
  return h.pid === undefined || h.host === undefined ? undefined : (h as LocalHandles);
}

/** True when the launch's runner process is alive (or lives on another host, where we cannot tell). */
export function runnerAlive(launch: LaunchRow): boolean {
  const h = handles(launch);
  if (!h) return true; // not started yet
  if (h.host !== shortHostname()) return true;
  return isProcessAlive(h.pid, h.pid_start);
}

/** Drop a cancel request where the launch's runner looks for it, and wake the runner (SIGUSR1). */
export function requestCancel(launch: LaunchRow, tasks: readonly number[] | 'all'): void {
  const dir = path.join(launch.dir, 'cancel');
  fs.mkdirSync(dir, { recursive: true });
  const req: CancelRequest = { tasks: tasks === 'all' ? 'all' : [...tasks], at: Date.now() / 1000 };
  writeFileAtomic(path.join(dir, `${Date.now()}-${process.pid}.json`), JSON.stringify(req));
  const h = handles(launch);
  if (h && h.host === shortHostname() && isProcessAlive(h.pid, h.pid_start)) {
    try {
      process.kill(h.pid, 'SIGUSR1');
    } catch {
      // it ended meanwhile; reconcile records what is left
    }
  }
}
