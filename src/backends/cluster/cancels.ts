import fs from 'node:fs';
import path from 'node:path';
import { writeFileAtomic } from '../../files.js';
import type { CancelRequest } from '../../runner/group.js';

/** Where drover cancel drops its requests in a launch's folder, which every runner of the launch reads. */
function cancelDir(launchDir: string): string {
  return path.join(launchDir, 'cancel');
}

/**
 * The tasks `drover cancel` asked to cancel in a launch (the requests in its `cancel/` folder), or 'all'.
 * Reconciliation of the cluster backends reads them to tell a task cancelled by drover from one the scheduler
 * stopped.
 */
export function cancelRequests(launchDir: string): Set<number> | 'all' {
  const dir = cancelDir(launchDir);
  const tasks = new Set<number>();
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return tasks;
  }
  for (const name of names) {
    if (!name.endsWith('.json')) continue;
    try {
      const req = JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8')) as CancelRequest;
      if (req.tasks === 'all') return 'all';
      for (const t of req.tasks) tasks.add(t);
    } catch {
      // a request being written right now: the next refresh reads it
    }
  }
  return tasks;
}

/**
 * Drop a cancel request into a cluster launch's `cancel/` folder before the scheduler is asked to stop its
 * elements (a runner the scheduler stops reads it to record its tasks `cancelled`; packed runners read it every
 * 2 s). Returns `narrow`, for when the scheduler did not take the request: the request then keeps only the given
 * tasks (none: it is removed), so that tasks left running are not taken for cancelled when they end later.
 */
export function writeCancelRequest(
  launchDir: string,
  tasks: readonly number[] | 'all',
): (keep: readonly number[]) => void {
  const dir = cancelDir(launchDir);
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${Date.now()}-${process.pid}.json`);
  const write = (list: readonly number[] | 'all') => {
    const req: CancelRequest = { tasks: list === 'all' ? 'all' : [...list], at: Date.now() / 1000 };
    writeFileAtomic(file, JSON.stringify(req));
  };
  write(tasks);
  return (keep) => {
    if (keep.length > 0) write(keep);
    else fs.rmSync(file, { force: true });
  };
}
