import fs from 'node:fs';
import path from 'node:path';
import { DroverError, usageError } from '../errors.js';
import { createRankJob, findJob, type JobRow } from '../ledger/jobs.js';
import type { Ledger } from '../ledger/ledger.js';
import type { DroverPaths } from '../paths.js';
import { serializeJobfile, validateJobname, writeJobfileAtomic } from '../sweep/index.js';
import { type LoadJobOptions, loadJob } from './load-job.js';
import type { LaunchSpec } from './spec.js';

/** What resolving a launch's job needs: the folder's paths and its ledger. */
export interface Workspace {
  paths: DroverPaths;
  ledger: Ledger;
}

/**
 * A new job's name from the time (`command-20261201-080834`, then `-2`, `-3`... within the same second): the
 * job's folder is made with an exclusive mkdir, so concurrent launches never share a name.
 */
export function newJobName(paths: DroverPaths): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  fs.mkdirSync(path.dirname(paths.jobDir('x')), { recursive: true });
  for (let n = 1; ; n++) {
    const name = n === 1 ? `command-${stamp}` : `command-${stamp}-${n}`;
    try {
      fs.mkdirSync(paths.jobDir(name));
      return name;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
}

/** The one-task job of `--command`: made new, or the named job when it has exactly that one task. */
function commandJob(ws: Workspace, command: string, jobname: string | undefined): string {
  const text = serializeJobfile(new Map([[1, { command, tag: '' }]]));
  const name = jobname ?? newJobName(ws.paths);
  const file = ws.paths.jobfile(name);
  if (jobname !== undefined && fs.existsSync(file)) {
    if (fs.readFileSync(file, 'utf8') === text) return name;
    throw usageError(`job '${name}' already exists with other tasks: pick another --jobname for --command`);
  }
  writeJobfileAtomic(file, text);
  return name;
}

/** The job of `--command C --num-jobs N`: N ranks of C, always a new job (call inside the launch's transaction). */
function rankJob(ws: Workspace, command: string, count: number, jobname: string | undefined): JobRow {
  if (jobname !== undefined && findJob(ws.ledger, jobname)) {
    throw new DroverError(
      'conflict',
      `job '${jobname}' already exists: pick another --jobname for --command`,
    );
  }
  const name = jobname ?? newJobName(ws.paths);
  void command; // the ranks' command is the launch's (its options); each rank's row is made as it is dispatched
  return createRankJob(ws.ledger, name, ws.paths.jobfile(name), count);
}

/**
 * The job a launch runs, with the ledger's tasks matching its jobfile: the job named by `--jobname` (read again
 * if its jobfile changed), or a new one for `--command`.
 */
export function launchJob(ws: Workspace, spec: LaunchSpec, options: JobOptions = {}): JobRow {
  if (spec.command !== undefined && spec.numJobs !== undefined) {
    return rankJob(ws, spec.command, spec.numJobs, spec.jobname);
  }
  const name = spec.command !== undefined ? commandJob(ws, spec.command, spec.jobname) : spec.jobname!;
  validateJobname(name);
  const load = { ...options, ...(spec.jobfile !== undefined ? { jobfile: spec.jobfile } : {}) };
  if (!options.quiet) return loadJob(ws, name, load);
  try {
    return loadJob(ws, name, load);
  } catch (err) {
    throw quietJobfileError(ws, name, spec.jobfile, err);
  }
}

/** How a launch's job is read. */
export interface JobOptions extends Pick<LoadJobOptions, 'report'> {
  /**
   * An error about the jobfile names the file and why, never its contents (a parse error quotes them, a bad key
   * names it): for the API, whose request may name any file the server can read.
   */
  quiet?: boolean;
}

function quietJobfileError(ws: Workspace, name: string, jobfile: string | undefined, err: unknown): unknown {
  if (!(err instanceof DroverError) || err.code === 'not-found' || err.code === 'usage') return err;
  const file = jobfile ?? findJob(ws.ledger, name)?.jobfile ?? ws.paths.jobfile(name);
  const errno = (err.cause as NodeJS.ErrnoException | undefined)?.code;
  const why =
    errno === 'ENOENT'
      ? 'does not exist'
      : typeof errno === 'string'
        ? `cannot be read (${errno})`
        : "is not a jobfile (onager's JSON of task id to [command, tag])";
  return new DroverError(
    err.code,
    `jobfile ${file} ${why}: check it on the server's host, or run drover prelaunch again`,
  );
}
