import type {
  AttemptRecord,
  EndRecord,
  RunnerRecord,
  SkipManyRecord,
  StartRecord,
} from '../protocol/records.js';
import type { TerminalState } from '../protocol/states.js';
import { RangeSet } from '../util/id-ranges.js';
import type { Ledger } from './ledger.js';
import type { RefusedMove } from './moves.js';
import {
  addLaunchTimes,
  recordAttempt,
  recordEnd,
  recordEndWithoutStart,
  recordSkip,
  recordSkips,
  recordStart,
} from './transitions/attempts.js';
import { recordAttempts } from './transitions/attempts-batch.js';
import type { Outcome } from './transitions/move.js';
import { recordPreempted } from './transitions/preempted.js';

/**
 * The one path from attempt records to transitions, for the record files of direct launches (ingest.ts) and the
 * reports of pool workers (transitions/pool.ts applyWorkerRecords) alike.
 */

/** What applying a batch of records did. */
export interface Applied {
  /** Every start record, in order. */
  started: { task: number; attempt: number; at: number }[];
  /**
   * Every end and skip record (a skip as attempt 0, `cancelled`), in order. Not the tasks of skip-many records
   * (a million of them, from record files only: nothing that reads this gets them).
   */
  ended: { task: number; attempt: number; state: TerminalState; at: number }[];
  /** The records whose move the legal moves refused (nothing of them was written), with the move. */
  refused: { record: AttemptRecord; move: RefusedMove }[];
}

/**
 * Apply a batch of one launch's records in order, in one transaction, idempotently. A start whose end is in
 * the same batch is held back and applied together with its end as one transition (`recordAttempt`): the
 * common case for short tasks. A held start is applied before any other record of its task, so each task's
 * records apply in order even when some are missing (a damaged line). An end whose start was never recorded
 * still counts. The runner records of a record file (`file`) say who writes it; a report has none.
 *
 * The tasks whose only records in the batch are one attempt's start and end go first, all at once
 * (`recordAttempts`, a few statements for the whole batch); the records of every other task, and of any such
 * attempt that would not simply be recorded (a refused move, a replay), then apply one by one as above. Each
 * record touches only its own task's rows, so this order makes the same rows; the launch's time totals are
 * summed in the records' order all the same.
 */
export function applyRecords(
  ledger: Ledger,
  launch: { id: number; job_id: number },
  records: readonly AttemptRecord[],
  file?: string,
): Applied {
  if (!ledger.db.inTransaction) return ledger.write(() => applyRecords(ledger, launch, records, file));
  const out: Applied = { started: [], ended: [], refused: [] };
  const note = (record: AttemptRecord, o: Outcome) => {
    if (o.kind === 'refused') out.refused.push({ record, move: o.move });
    return o;
  };
  /** Starts held back, by task. */
  const held = new Map<number, StartRecord>();
  const release = (task: number) => {
    const start = held.get(task);
    if (!start) return;
    held.delete(task);
    note(start, recordStart(ledger, launch.job_id, launch.id, start));
  };
  /** The skips of tasks `first`..`last` of skip-many record `r` (the loop below). */
  const skipMany = (r: SkipManyRecord, first: number, last: number) => {
    if (first > last) return;
    for (const move of recordSkips(ledger, launch.job_id, launch.id, first, last))
      out.refused.push({ record: r, move });
  };
  const lone = loneAttempts(records);
  // A task a skip-many names is not a lone attempt: its records apply one by one, in their order.
  const many = records.filter((r) => r.type === 'skip-many');
  if (many.length > 0 && lone.size > 0) {
    const named = new RangeSet(many.flatMap((r) => r.ranges));
    for (const task of [...lone.keys()]) if (named.has(task)) lone.delete(task);
  }
  const whole = recordAttempts(ledger, launch.job_id, launch.id, lone.values());
  let first = Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  let busy = 0;
  for (const r of records) {
    if ((r.type === 'start' || r.type === 'end') && whole.has(r.task)) {
      // Recorded above, with its start or end.
      if (r.type === 'start') out.started.push({ task: r.task, attempt: r.attempt, at: r.at });
      else {
        out.ended.push({ task: r.task, attempt: r.attempt, state: r.state, at: r.at });
        const start = lone.get(r.task)![0];
        first = Math.min(first, start.at);
        last = Math.max(last, r.at);
        busy += r.at - start.at;
      }
      continue;
    }
    switch (r.type) {
      case 'runner':
        if (file !== undefined) runnerStarted(ledger, launch.id, file, r);
        break;
      case 'start':
        release(r.task);
        held.set(r.task, r);
        out.started.push({ task: r.task, attempt: r.attempt, at: r.at });
        break;
      case 'end': {
        out.ended.push({ task: r.task, attempt: r.attempt, state: r.state, at: r.at });
        const start = held.get(r.task);
        if (start?.attempt === r.attempt) {
          held.delete(r.task);
          const o = note(r, recordAttempt(ledger, launch.job_id, launch.id, start, r));
          if (o.kind === 'applied') {
            first = Math.min(first, start.at);
            last = Math.max(last, r.at);
            busy += r.at - start.at;
          } else if (o.kind === 'unchanged') note(r, recordEnd(ledger, launch.job_id, launch.id, r));
          break;
        }
        release(r.task);
        const o = note(r, recordEnd(ledger, launch.job_id, launch.id, r));
        if (o.kind === 'unchanged') note(r, recordEndWithoutStart(ledger, launch.job_id, launch.id, r));
        break;
      }
      case 'skip':
        out.ended.push({ task: r.task, attempt: 0, state: 'cancelled', at: r.at });
        release(r.task);
        note(r, recordSkip(ledger, launch.job_id, launch.id, r));
        break;
      case 'skip-many':
        // As a skip of each of its tasks in turn: a task's held start goes just before its skip (a runner never
        // started them: only a damaged or hand-made file has such starts).
        for (const [first, last] of r.ranges) {
          let from = first;
          for (const task of heldBetween(held, first, last)) {
            skipMany(r, from, task - 1);
            release(task);
            from = task;
          }
          skipMany(r, from, last);
        }
        break;
      case 'preempted':
        release(r.task);
        note(r, recordPreempted(ledger, launch.job_id, launch.id, r));
        break;
      case 'runner-end':
        if (file !== undefined) runnerEnded(ledger, launch.id, file, r.at);
        break;
    }
  }
  for (const start of held.values()) note(start, recordStart(ledger, launch.job_id, launch.id, start));
  if (Number.isFinite(first)) addLaunchTimes(ledger, launch.id, first, last, busy);
  return out;
}

/**
 * The attempts of tasks whose only records in `records` are its start and then its end (the common case: each
 * task ran once since the last batch), by task.
 */
function loneAttempts(records: readonly AttemptRecord[]): Map<number, [StartRecord, EndRecord]> {
  const pairs = new Map<number, [StartRecord, EndRecord]>();
  /** Per task: its start while it is all there is, its pair once the end followed, null for any other mix. */
  const seen = new Map<number, StartRecord | [StartRecord, EndRecord] | null>();
  for (const r of records) {
    if (r.type !== 'start' && r.type !== 'end' && r.type !== 'skip' && r.type !== 'preempted') continue;
    const before = seen.get(r.task);
    if (before === undefined && r.type === 'start') seen.set(r.task, r);
    else if (
      before !== undefined &&
      before !== null &&
      !Array.isArray(before) &&
      r.type === 'end' &&
      r.attempt === before.attempt
    ) {
      seen.set(r.task, [before, r]);
    } else seen.set(r.task, null);
  }
  for (const [task, v] of seen) {
    if (Array.isArray(v)) pairs.set(task, v);
  }
  return pairs;
}

/** The tasks of held starts from `first` to `last`, in rising order. */
function heldBetween(held: ReadonlyMap<number, StartRecord>, first: number, last: number): number[] {
  if (held.size === 0) return [];
  return [...held.keys()].filter((t) => t >= first && t <= last).sort((a, b) => a - b);
}

/** A runner record: who writes `file` (its host, pid and the pid's start time tell when it is gone). */
function runnerStarted(ledger: Ledger, launchId: number, file: string, r: RunnerRecord): void {
  ledger
    .stmt(
      `INSERT INTO runners (launch_id, name, host, pid, pid_start, started_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT DO NOTHING`,
    )
    .run(launchId, r.runner, r.host, r.pid, r.pid_start, r.at);
  ledger
    .stmt('INSERT OR IGNORE INTO runner_files (launch_id, path, runner) VALUES (?, ?, ?)')
    .run(launchId, file, r.runner);
}

/** The runner of `file` finished. */
function runnerEnded(ledger: Ledger, launchId: number, file: string, at: number): void {
  const row = ledger.stmt('SELECT runner FROM runner_files WHERE path = ?').get(file) as
    | { runner: string }
    | undefined;
  if (row) {
    ledger
      .stmt('UPDATE runners SET ended_at = ? WHERE launch_id = ? AND name = ?')
      .run(at, launchId, row.runner);
  }
}
