import { once } from 'node:events';
import fs from 'node:fs';
import type { Command } from 'commander';
import { refresh } from '../backends/refresh.js';
import { DroverError, usageError } from '../errors.js';
import { loadJob } from '../launch/load-job.js';
import { jobHasTask, jobNotFound } from '../ledger/jobs.js';
import { latestInLaunch, taskAttempt, taskNow } from '../ledger/queries.js';
import { extentOf, isEmptySlice, type LogPlace, placeOf } from '../protocol/log-slices.js';
import { validateJobname } from '../sweep/index.js';
import { parseInteger } from '../util/integer.js';
import { COUNTS, MAX_JOB_TASKS } from '../util/limits.js';
import { openTaskFileHandle } from '../util/task-file.js';
import { note } from './output.js';
import { intOption } from './parse.js';
import { openExistingWorkspace, type Workspace } from './workspace.js';

interface LogsOptions {
  err?: boolean;
  follow?: boolean;
  attempt?: number;
  path?: boolean;
}

/** Register `drover logs`. */
export function registerLogs(program: Command): void {
  program
    .command('logs')
    .description('print a task’s output (its latest attempt unless --attempt)')
    .argument('<job>', 'the job')
    .argument('<task>', 'the task id')
    .option('--err', 'print stderr instead of stdout')
    .option(
      '-f, --follow',
      'keep printing as the task writes, until it ends: a queued task is waited for, and each retry followed in turn (unless --attempt)',
    )
    .option('--attempt <n>', 'this attempt instead of the latest', intOption('--attempt', COUNTS.attempt))
    .option('--path', 'print the log file’s path instead of its content')
    .action(async (job: string, task: string, opts: LogsOptions) => {
      await logs(job, task, opts);
    });
}

async function logs(jobname: string, taskText: string, opts: LogsOptions): Promise<void> {
  validateJobname(jobname, 'job');
  const taskId = parseInteger(taskText, 'task', { min: 1, max: MAX_JOB_TASKS, unit: '' });
  const ws = openExistingWorkspace();
  if (!ws) throw jobNotFound(jobname);
  const job = loadJob(ws, jobname, { report: note });
  if (!jobHasTask(ws.ledger, job.id, taskId))
    throw usageError(`task ${taskId} is not in job '${jobname}': see drover list ${jobname} for its tasks`);
  refresh(ws.ledger, job.id);
  if (opts.follow && opts.attempt === undefined && !opts.path) {
    const followed = await followTask(ws, jobname, job.id, taskId, opts.err === true);
    if (followed === 'never started') {
      const { state } = taskNow(ws.ledger, job.id, taskId);
      note(
        `drover: task ${taskId} of '${jobname}' ended ${state} without starting: see drover status ${jobname}`,
      );
      process.exitCode = 1;
      return;
    }
    if (followed !== 'nothing') {
      sayIfLost(ws, jobname, job.id, taskId, followed);
      return;
    }
  }
  const a = taskAttempt(ws.ledger, job.id, taskId, opts.attempt);
  if (!a) {
    const what = opts.attempt !== undefined ? `attempt ${opts.attempt}` : 'no attempt yet';
    throw new DroverError(
      'not-found',
      `task ${taskId} of '${jobname}' has ${what === 'no attempt yet' ? what : `no ${what}`}: see drover list --jobname ${jobname}`,
    );
  }
  const stream = opts.err ? 'err' : 'out';
  const place = placeOf(a, stream);
  if (!place.path)
    throw new DroverError('not-found', `task ${taskId} attempt ${a.attempt} has no log file recorded`);
  if (opts.path) {
    process.stdout.write(`${place.path}\n`);
    if (place.off !== null) {
      const till = place.end !== null ? `${place.end}` : 'its end (it runs)';
      note(
        `drover: that file is its slot's segment: the attempt's ${opts.err ? 'stderr' : 'stdout'} is its bytes from ${place.off} to ${till} (drover logs prints just those; launch with --logs files for a file per attempt)`,
      );
    }
    return;
  }
  if (!opts.follow) {
    const copied = await copyFrom(place, stream, 0);
    if (copied === 'missing') {
      throw new DroverError(
        'not-found',
        `log file ${place.path} is gone (removed, or on a node's local disk)`,
      );
    }
    return;
  }
  await follow(ws, job.id, taskId, a.attempt, stream);
  sayIfLost(ws, jobname, job.id, taskId, a.attempt);
}

/**
 * After `--follow`: an attempt that ended `lost` (its runner was SIGKILLed or its node died, as the backend's
 * refresh found) is one line on stderr and exit 1, so a script does not take its output for a whole run.
 */
function sayIfLost(ws: Workspace, jobname: string, jobId: number, taskId: number, attempt: number): void {
  const a = taskAttempt(ws.ledger, jobId, taskId, attempt);
  if (a?.state !== 'lost') return;
  note(
    `drover: task ${taskId} of '${jobname}' attempt ${attempt} is lost (${a.reason ?? 'its runner is gone'}): its output above is all it left; rerun it with drover launch ${jobname} --tasklist ${taskId}`,
  );
  process.exitCode = 1;
}

/**
 * Copy an attempt's output from byte `from` of it (0: its first) to stdout as far as it goes now, a chunk at a
 * time and waiting whenever stdout is full: constant memory whatever the size (a log may be many GiB). Returns
 * how far it went (from its first byte) and whether that is its end, or 'missing' when there is no such file;
 * other errors (unreadable) are one line naming the file. An attempt in a segment with nothing written has no
 * need of the file: it may never have been made.
 */
async function copyFrom(
  place: LogPlace,
  stream: 'out' | 'err',
  from: number,
): Promise<{ upTo: number; final: boolean } | 'missing'> {
  const file = place.path!;
  let handle: fs.promises.FileHandle;
  try {
    handle = await openTaskFileHandle(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      if (isEmptySlice(place)) return { upTo: 0, final: true };
      return 'missing';
    }
    throw new DroverError('not-found', `cannot read log file ${file}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  try {
    const extent = extentOf(handle.fd, place, stream);
    const start = extent.start + from;
    if (start < extent.end) {
      const chunks = handle.createReadStream({
        start,
        end: extent.end - 1,
        highWaterMark: CHUNK,
        autoClose: false,
      });
      for await (const chunk of chunks) {
        if (!process.stdout.write(chunk as Buffer)) await once(process.stdout, 'drain');
      }
    }
    return { upTo: Math.max(from, extent.end - extent.start), final: extent.final };
  } catch (err) {
    throw new DroverError('not-found', `cannot read log file ${file}: ${(err as Error).message}`, {
      cause: err,
    });
  } finally {
    await handle.close();
  }
}

/** Bytes read and written at a time. */
const CHUNK = 1 << 16;

/**
 * `logs --follow` of a task queued or running in its newest launch: wait for it to start (it may be queued
 * behind others, or on a scheduler), follow its attempt, then each retry's in turn, until the task has ended.
 * Returns the last attempt followed; 'nothing' when the newest launch has nothing to follow (the task is not
 * queued or running there: then the latest attempt is shown as without --follow); 'never started' when the
 * task waited for ended without an attempt (cancelled, or its runner died before starting it).
 */
async function followTask(
  ws: Workspace,
  jobname: string,
  jobId: number,
  taskId: number,
  err: boolean,
): Promise<number | 'nothing' | 'never started'> {
  let seen = 0;
  let waiting = false;
  for (;;) {
    const now = taskNow(ws.ledger, jobId, taskId);
    const a = now.launch !== null ? latestInLaunch(ws.ledger, jobId, taskId, now.launch) : undefined;
    if (a && a.attempt > seen) {
      if (seen > 0) note(`drover: task ${taskId} attempt ${a.attempt} started (a retry)`);
      const stream = err ? 'err' : 'out';
      if (placeOf(a, stream).path) await follow(ws, jobId, taskId, a.attempt, stream);
      seen = a.attempt;
      continue;
    }
    if (now.state !== 'queued' && now.state !== 'running') {
      if (seen > 0) return seen;
      return waiting ? 'never started' : 'nothing';
    }
    if (!waiting && seen === 0) {
      note(
        `drover: task ${taskId} of '${jobname}' is queued: waiting for it to start (Ctrl-C stops waiting)`,
      );
      waiting = true;
    }
    await new Promise((r) => setTimeout(r, 250));
    refresh(ws.ledger, jobId);
  }
}

/**
 * Print an attempt's output as it grows until the attempt has ended and everything is printed. A slice of a
 * segment says itself where it ends (log-slices.ts); a file of its own has ended once the ledger says so and
 * nothing more is in it.
 */
async function follow(
  ws: Workspace,
  jobId: number,
  taskId: number,
  attempt: number,
  stream: 'out' | 'err',
): Promise<void> {
  let offset = 0;
  for (;;) {
    const a = taskAttempt(ws.ledger, jobId, taskId, attempt);
    if (!a) return;
    const place = placeOf(a, stream);
    if (!place.path) return;
    const ended = a.state !== 'running' && a.state !== 'queued';
    const copied = await copyFrom(place, stream, offset); // 'missing': not created yet
    if (copied !== 'missing') {
      offset = copied.upTo;
      if (copied.final) return;
    }
    if (ended && place.off === null) {
      // Everything was in the file when it was read after the end: done, unless it grew meanwhile.
      const size = fs.statSync(place.path, { throwIfNoEntry: false })?.size ?? 0;
      if (size <= offset) return;
      continue;
    }
    // Ended with no end of its slice known (its runner died): what is there is all there will be.
    if (ended) return;
    await new Promise((r) => setTimeout(r, 250));
    refresh(ws.ledger, jobId);
  }
}
