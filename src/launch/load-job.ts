import fs from 'node:fs';
import type { Workspace } from '../cli/workspace.js';
import { DroverError } from '../errors.js';
import { findJob, type JobRow, syncJobTasks } from '../ledger/jobs.js';
import { readJobfile, validateJobname } from '../sweep/index.js';

/**
 * The job named `name`, with the ledger's tasks matching its jobfile. The jobfile (onager's format) is the
 * source of the task list: it is read again only when it changed since the ledger last read it, so an onager
 * jobfile dropped into place, or edited, is picked up.
 */
export function loadJob(ws: Workspace, name: string, jobfileOverride?: string): JobRow {
  validateJobname(name);
  const known = findJob(ws.ledger, name);
  const jobfile = jobfileOverride ?? known?.jobfile ?? ws.paths.jobfile(name);
  let mtime: number;
  try {
    mtime = fs.statSync(jobfile).mtimeMs;
  } catch {
    if (known) return known; // the ledger still knows its tasks
    throw new DroverError(
      'not-found',
      `no job named '${name}' (no jobfile at ${jobfile}): create it with 'drover prelaunch +jobname ${name} +command ...'`,
    );
  }
  if (known && known.jobfile === jobfile && known.jobfile_mtime === mtime) return known;
  return syncJobTasks(ws.ledger, name, jobfile, readJobfile(jobfile), mtime);
}
