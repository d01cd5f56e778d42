import { usageError } from '../errors.js';
import { type JobRow, jobTaskIds, resolveTasklist } from '../ledger/jobs.js';
import type { Ledger } from '../ledger/ledger.js';
import { taskIdsWhere } from '../ledger/queries.js';
import { isFailedState, isUnfinishedState } from '../protocol/states.js';

/** Which of a job's tasks a launch takes: a tasklist, `--failed`, `--unfinished`, or all. */
export interface Selection {
  tasklist?: string;
  failed?: boolean;
  unfinished?: boolean;
}

/** Check that at most one way of selecting tasks was given. */
export function checkSelection(sel: Selection): void {
  const given = [
    sel.tasklist !== undefined && '--tasklist',
    sel.failed && '--failed',
    sel.unfinished && '--unfinished',
  ].filter(Boolean);
  if (given.length > 1) throw usageError(`${given.join(' and ')} both select tasks: give only one`);
}

/** Resolve the selection to sorted task ids (states must be fresh: call refresh first for --failed/--unfinished). */
export function selectTasks(ledger: Ledger, job: JobRow, sel: Selection): number[] {
  if (sel.tasklist !== undefined) return resolveTasklist(ledger, job, sel.tasklist);
  if (sel.failed) return taskIdsWhere(ledger, job.id, isFailedState);
  if (sel.unfinished) return taskIdsWhere(ledger, job.id, isUnfinishedState);
  return jobTaskIds(ledger, job.id);
}
