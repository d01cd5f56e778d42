import fs from 'node:fs';
import path from 'node:path';
import type { CancelRequest } from '../../runner/group.js';

/**
 * The tasks `drover cancel` asked to cancel in a launch (the requests in its `cancel/` folder, written by
 * requestCancel in backends/local/runner-handle.ts), or 'all'. Reconciliation of the cluster backends reads them to
 * tell a task cancelled by drover from one the scheduler stopped.
 */
export function cancelRequests(launchDir: string): Set<number> | 'all' {
  const dir = path.join(launchDir, 'cancel');
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
