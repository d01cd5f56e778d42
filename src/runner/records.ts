import { attemptFile, segmentLogs } from '../protocol/log-slices.js';
import {
  type EndRecord,
  nowSec,
  RECORDS_VERSION,
  type RunnerEndRecord,
  type RunnerRecord,
  type SkipManyRecord,
  type SkipRecord,
  type StartRecord,
} from '../protocol/records.js';
import { processStartTime } from '../util/proc.js';
import type { EndFields } from './end-state.js';
import type { GroupFile } from './group.js';
import type { TaskEnd } from './runner-types.js';
import type { Slot } from './slots.js';
import type { SegmentSpan } from './starters/starter.js';

/**
 * The records a runner writes to its record file (protocol/records.ts), each built here and nowhere else, and
 * the ends it reports to its caller. The key order of each record is the order of its line in the file.
 */

/** What a runner's records say of where it runs and where its attempts' output goes. */
export interface RecordSite {
  host: string;
  slots: readonly Slot[];
  logDir: string;
  /** The prefix of the group's segments (`<prefix>.<slot>.out`); undefined: a log file per attempt. */
  segments: string | undefined;
}

/** The first record of a runner's file: who writes it. */
export function runnerRecord(name: string, group: GroupFile, site: RecordSite): RunnerRecord {
  return {
    type: 'runner',
    v: RECORDS_VERSION,
    runner: name,
    launch: group.launch,
    job: group.job,
    host: site.host,
    pid: process.pid,
    pid_start: processStartTime(process.pid),
    slots: site.slots.length,
    at: nowSec(),
  };
}

/** An attempt's own log files (`--logs files`). */
export function attemptLogFiles(logDir: string, task: number, attempt: number): { out: string; err: string } {
  return { out: attemptFile(logDir, task, attempt, 'out'), err: attemptFile(logDir, task, attempt, 'err') };
}

/** Where an attempt's start began: its process (pid 0 when it could not be started), slot, time and segments. */
export interface StartFacts {
  pid: number;
  slot: number;
  at: number;
  segment: SegmentSpan | undefined;
}

/**
 * The record of an attempt's start, whether its process started or the starter could not start it. Its output
 * is its files, or its slot's segments and where it begins in them (nothing when the segments could not be
 * opened).
 */
export function startRecord(site: RecordSite, task: number, attempt: number, start: StartFacts): StartRecord {
  const gpus = site.slots[start.slot]?.gpus ?? [];
  const logs = !site.segments
    ? attemptLogFiles(site.logDir, task, attempt)
    : start.segment
      ? segmentLogs(site.segments, start.slot, start.segment)
      : { out: '', err: '' };
  return {
    type: 'start',
    task,
    attempt,
    at: start.at,
    pid: start.pid,
    slot: start.slot,
    gpus: gpus.length > 0 ? gpus.join(',') : null,
    host: site.host,
    ...logs,
  };
}

/** What follows an attempt that ended: another as a retry, or as a requeue (`--requeue`), or none. */
export type NextAttempt = 'retry' | 'requeue' | null;

/** The record of an attempt's end; `segment`: where its output went, ends included, when in segments. */
export function endRecord(
  site: RecordSite,
  task: number,
  attempt: number,
  at: number,
  end: EndFields,
  next: NextAttempt,
  segment: SegmentSpan | undefined,
): EndRecord {
  return {
    type: 'end',
    task,
    attempt,
    at,
    ...end,
    ...(next === 'retry' ? { retry: true } : next === 'requeue' ? { requeue: true } : {}),
    ...(site.segments && segment?.outEnd !== undefined
      ? { out_end: segment.outEnd, err_end: segment.errEnd! }
      : {}),
  };
}

/** A task cancelled before it started. */
export function skipRecord(task: number): SkipRecord {
  return { type: 'skip', task, at: nowSec(), state: 'cancelled' };
}

/** Many tasks cancelled before they started, as ranges of ids. */
export function skipManyRecord(ranges: [number, number][]): SkipManyRecord {
  return { type: 'skip-many', ranges, at: nowSec(), state: 'cancelled' };
}

/** The last record of a runner's file. */
export function runnerEndRecord(cancelled: boolean): RunnerEndRecord {
  return { type: 'runner-end', at: nowSec(), reason: cancelled ? 'cancelled' : 'done' };
}

/** How an attempt that ran (or was tried) ended, as live progress shows it. */
export function attemptEnd(
  site: RecordSite,
  task: number,
  attempt: number,
  end: EndFields,
  seconds: number,
  next: NextAttempt,
): TaskEnd {
  return {
    task,
    attempt,
    state: end.state,
    exitCode: end.exit_code,
    signal: end.signal,
    ...(end.reason !== undefined ? { reason: end.reason } : {}),
    seconds,
    err: site.segments ? null : attemptFile(site.logDir, task, attempt, 'err'),
    willRetry: next !== null,
    ...(next === 'requeue' ? { requeue: true } : {}),
  };
}

/** A task the runner was given that ends cancelled without starting (attempt 0). */
export function notStartedEnd(task: number): TaskEnd {
  return {
    task,
    attempt: 0,
    state: 'cancelled',
    exitCode: null,
    signal: null,
    seconds: null,
    err: null,
    willRetry: false,
  };
}
