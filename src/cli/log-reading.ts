import { once } from 'node:events';
import fs from 'node:fs';
import { refresh } from '../backends/refresh.js';
import { DroverError } from '../errors.js';
import { attemptRequeued, latestInLaunch, taskAttempt, taskNow } from '../ledger/queries.js';
import { extentOf, isEmptySlice, type LogPlace, placeOf } from '../protocol/log-slices.js';
import { openTaskFileHandle } from '../util/task-file.js';
import { note } from './output.js';
import type { Workspace } from './workspace.js';

/** Reading a task's logs for `drover logs`: whole, from an offset, or following them as they grow. */

/**
 * After `--follow`: an attempt that ended `lost` (its runner was SIGKILLed or its node died, as the backend's
 * refresh found) is one line on stderr and exit 1, so a script does not take its output for a whole run.
 */
export function sayIfLost(
  ws: Workspace,
  jobname: string,
  jobId: number,
  taskId: number,
  attempt: number,
): void {
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
export async function copyFrom(
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
 * behind others, or on a scheduler), follow its attempt, then each retry's or requeue's in turn, until the task
 * has ended.
 * Returns the last attempt followed; 'nothing' when the newest launch has nothing to follow (the task is not
 * queued or running there: then the latest attempt is shown as without --follow); 'never started' when the
 * task waited for ended without an attempt (cancelled, or its runner died before starting it).
 */
export async function followTask(
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
      if (seen > 0) {
        const how = attemptRequeued(ws.ledger, jobId, taskId, seen) ? 'a requeue' : 'a retry';
        note(`drover: task ${taskId} attempt ${a.attempt} started (${how})`);
      }
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
export async function follow(
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

/**
 * `logs --all-attempts`: each attempt of the task, oldest first, after a line `==> attempt N: STATE <==` (as
 * `tail` heads several files), so a requeued or retried task reads as one story. An attempt whose log is gone is
 * said on stderr, and the others are still printed; exit 1 then.
 */
export async function printAllAttempts(
  ws: Workspace,
  jobname: string,
  jobId: number,
  taskId: number,
  stream: 'out' | 'err',
): Promise<void> {
  const latest = taskAttempt(ws.ledger, jobId, taskId);
  if (!latest)
    throw new DroverError(
      'not-found',
      `task ${taskId} of '${jobname}' has no attempt yet: see drover list --jobname ${jobname}`,
    );
  for (let n = 1; n <= latest.attempt; n++) {
    const a = taskAttempt(ws.ledger, jobId, taskId, n);
    if (!a) continue;
    const why = a.reason ? ` (${a.reason})` : '';
    process.stdout.write(`==> attempt ${n}: ${a.state}${why} <==\n`);
    const place = placeOf(a, stream);
    const copied = place.path ? await copyFrom(place, stream, 0) : 'missing';
    if (copied === 'missing') {
      note(`drover: task ${taskId} attempt ${n}: its log ${place.path ?? '(none recorded)'} is gone`);
      process.exitCode = 1;
    }
  }
}
