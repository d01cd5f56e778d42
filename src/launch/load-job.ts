import fs from 'node:fs';
import { DroverError } from '../errors.js';
import { describeChanges, type JobChanges, syncJobTasks } from '../ledger/job-sync.js';
import { findJob, type JobRow } from '../ledger/jobs.js';
import type { Ledger } from '../ledger/ledger.js';
import type { DroverPaths } from '../paths.js';
import {
  paramsFileLimit,
  paramsFilePath,
  paramsOfEntries,
  readJobfile,
  readParamsFile,
  validateJobname,
} from '../sweep/index.js';

/** What loading a job needs: the folder's paths and its ledger. */
export interface JobSource {
  paths: DroverPaths;
  ledger: Ledger;
}

/** How a job is loaded. */
export interface LoadJobOptions {
  /** Read the tasks from this jobfile instead of the one the ledger knows (or the default path). */
  jobfile?: string;
  /** Told one line when the jobfile changed behind drover's back (edited, or rewritten by onager). */
  report?: (line: string) => void;
}

/**
 * `mtime:ctime:size:inode` of a file, or undefined when it is missing: what tells a jobfile changed since the
 * ledger read it (an atomic rewrite changes the inode, an edit the times or size).
 */
export function jobfileStamp(file: string): string | undefined {
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
  } catch {
    return undefined;
  }
  return `${st.mtimeMs}:${st.ctimeMs}:${st.size}:${st.ino}`;
}

/**
 * The stamp of a job's files: the jobfile's, then its params file's (`-` when it has none), so that a change of
 * either is read again. Undefined when the jobfile is missing.
 */
export function jobStamp(jobfile: string): string | undefined {
  const own = jobfileStamp(jobfile);
  return own === undefined ? undefined : `${own}|${jobfileStamp(paramsFilePath(jobfile)) ?? '-'}`;
}

/**
 * The jobfile's entries with the params the params file records for their commands; a params file that cannot be
 * used is reported in one line and gives no params.
 */
function entriesWithParams(jobfile: string, report: ((line: string) => void) | undefined) {
  const entries = readJobfile(jobfile);
  const file = paramsFilePath(jobfile);
  let size = 0;
  try {
    size = fs.statSync(jobfile).size;
  } catch {
    // read just now; a jobfile gone since leaves the smallest limit
  }
  const read = readParamsFile(file, paramsFileLimit(size));
  if (read.problem !== undefined)
    report?.(
      `drover: warning: ${file} ${read.problem}; the job's tasks show no params (prelaunch it again to rewrite it)`,
    );
  return paramsOfEntries(entries, read.records);
}

/**
 * The job named `name`, with the ledger's tasks matching its jobfile (docs/concepts.md invariant 1). The jobfile (onager's
 * format) is the source of the task list: it is read again whenever it changed since the ledger last read it, so
 * an onager jobfile dropped into place, or edited, is picked up with the same rules as a prelaunch: a task whose
 * command changed is pending again, a task no longer there leaves the job. Every command that reads a job calls
 * this before it answers.
 */
export function loadJob(src: JobSource, name: string, options: LoadJobOptions = {}): JobRow {
  validateJobname(name);
  const known = findJob(src.ledger, name);
  const jobfile = options.jobfile ?? known?.jobfile ?? src.paths.jobfile(name);
  const stamp = jobStamp(jobfile);
  if (stamp === undefined) {
    if (options.jobfile !== undefined) {
      throw new DroverError(
        'not-found',
        `--jobfile ${options.jobfile} does not exist: give the path of a jobfile (onager's jobs.json format)`,
      );
    }
    if (known) return known; // the ledger still knows its tasks
    throw new DroverError(
      'not-found',
      `no job named '${name}' (no jobfile at ${jobfile}): create it with 'drover prelaunch +jobname ${name} +command ...'`,
    );
  }
  if (known && known.jobfile === jobfile && known.jobfile_stamp === stamp) return known;
  if (!known)
    return syncJobTasks(src.ledger, name, jobfile, entriesWithParams(jobfile, options.report), stamp).job;
  // A read-only ledger (or a full disk, for a command that only reads) answers from what it knows, saying so.
  let job = known;
  src.ledger.refreshing(() => {
    const synced = syncJobTasks(src.ledger, name, jobfile, entriesWithParams(jobfile, options.report), stamp);
    job = synced.job;
    reportChanges(name, synced.changes, options.report);
  });
  return job;
}

function reportChanges(
  name: string,
  changes: JobChanges,
  report: ((line: string) => void) | undefined,
): void {
  const line = describeChanges(name, changes);
  if (line !== undefined) report?.(`drover: the jobfile changed since drover last read it: ${line}`);
}
