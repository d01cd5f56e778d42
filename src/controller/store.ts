import type { Ledger } from '../ledger/ledger.js';
import type { State, TerminalState } from '../ledger/states.js';
import {
  addLaunchTimes,
  markUnfinished,
  recordAttempt,
  recordEnd,
  recordSkip,
  recordStart,
} from '../ledger/transitions.js';
import type { AttemptRecord, StartRecord } from '../runner/records.js';

/**
 * The controller's named transitions on the ledger (callers wrap them in `ledger.write`). Pool launches use
 * the same tables and transitions as direct launches; pool_tasks holds only the tasks handed to a worker or
 * waiting to retry.
 */

/** A pool_tasks row. */
export interface PoolTaskRow {
  launch_id: number;
  task_id: number;
  /** The attempt number it runs (or will run) as. */
  attempt: number;
  /** Attempts started in this launch. */
  tries: number;
  /** The worker holding it; null while waiting to retry. */
  worker: string | null;
  /** Waiting to retry: not before this time (unix s). */
  not_before: number;
}

/** A queued task ready to hand out. */
export interface ReadyTask {
  task: number;
  attempt: number;
  command: string;
  /** Attempts started in this launch so far. */
  tries: number;
}

/** Queued tasks of a launch with ids above `after`, in id order, that were never handed out. */
export function freshTasks(
  ledger: Ledger,
  jobId: number,
  launchId: number,
  after: number,
  limit: number,
): ReadyTask[] {
  return ledger
    .stmt(
      `SELECT lt.task_id AS task, t.attempts + 1 AS attempt, t.command, 0 AS tries FROM launch_tasks lt
       JOIN tasks t ON t.job_id = ? AND t.id = lt.task_id
       WHERE lt.launch_id = ? AND lt.task_id > ? AND lt.state = 'queued' ORDER BY lt.task_id LIMIT ?`,
    )
    .all(jobId, launchId, after, limit) as ReadyTask[];
}

/** The command of a task. */
export function taskCommand(ledger: Ledger, jobId: number, taskId: number): string {
  return (
    ledger.stmt('SELECT command FROM tasks WHERE job_id = ? AND id = ?').get(jobId, taskId) as {
      command: string;
    }
  ).command;
}

/** A task's state within a launch. */
export function launchTaskState(ledger: Ledger, launchId: number, taskId: number): State | undefined {
  return (
    ledger.stmt('SELECT state FROM launch_tasks WHERE launch_id = ? AND task_id = ?').get(launchId, taskId) as
      | { state: State }
      | undefined
  )?.state;
}

/** Transition: hand a queued task to a worker (it stays `queued` until its start is reported). */
export function assignTask(
  ledger: Ledger,
  launchId: number,
  t: { task: number; attempt: number; tries: number },
  worker: string,
): void {
  ledger
    .stmt(
      `INSERT INTO pool_tasks (launch_id, task_id, attempt, tries, worker, not_before) VALUES (?, ?, ?, ?, ?, 0)
       ON CONFLICT (launch_id, task_id) DO UPDATE SET attempt = excluded.attempt, tries = excluded.tries,
         worker = excluded.worker, not_before = 0`,
    )
    .run(launchId, t.task, t.attempt, t.tries, worker);
  ledger.stmt('UPDATE pool_launches SET cursor = max(cursor, ?) WHERE launch_id = ?').run(t.task, launchId);
}

/** The pool_tasks row of a task. */
export function poolTask(ledger: Ledger, launchId: number, taskId: number): PoolTaskRow | undefined {
  return ledger.stmt('SELECT * FROM pool_tasks WHERE launch_id = ? AND task_id = ?').get(launchId, taskId) as
    | PoolTaskRow
    | undefined;
}

/** Transition: a task's attempt ended and it is tried again later (→ `queued`, attempt + 1). */
export function requeueForRetry(
  ledger: Ledger,
  jobId: number,
  launchId: number,
  taskId: number,
  nextAttempt: number,
  notBefore: number,
): void {
  ledger
    .stmt(
      'UPDATE pool_tasks SET worker = NULL, attempt = ?, not_before = ? WHERE launch_id = ? AND task_id = ?',
    )
    .run(nextAttempt, notBefore, launchId, taskId);
  setQueued(ledger, jobId, launchId, taskId);
}

/** Transition: a task handed to a worker that never started it goes back to waiting (same attempt). */
export function unassign(ledger: Ledger, launchId: number, taskId: number): void {
  ledger
    .stmt('UPDATE pool_tasks SET worker = NULL, not_before = 0 WHERE launch_id = ? AND task_id = ?')
    .run(launchId, taskId);
}

/** Transition: a task is done in this launch (its last attempt's state stands). */
export function finishTask(ledger: Ledger, launchId: number, taskId: number): void {
  ledger.stmt('DELETE FROM pool_tasks WHERE launch_id = ? AND task_id = ?').run(launchId, taskId);
}

function setQueued(ledger: Ledger, jobId: number, launchId: number, taskId: number): void {
  ledger
    .stmt("UPDATE launch_tasks SET state = 'queued' WHERE launch_id = ? AND task_id = ?")
    .run(launchId, taskId);
  ledger
    .stmt("UPDATE tasks SET state = 'queued' WHERE job_id = ? AND id = ? AND last_launch_id = ?")
    .run(jobId, taskId, launchId);
}

/** Transition: a started attempt whose worker went silent is `lost`. */
export function markLost(
  ledger: Ledger,
  jobId: number,
  launchId: number,
  taskId: number,
  reason: string,
): void {
  markUnfinished(ledger, jobId, launchId, [taskId], 'lost', reason);
}

/** True when the attempt was recorded as started. */
export function attemptStarted(ledger: Ledger, jobId: number, taskId: number, attempt: number): boolean {
  return (
    ledger
      .stmt('SELECT 1 FROM attempts WHERE job_id = ? AND task_id = ? AND attempt = ?')
      .get(jobId, taskId, attempt) !== undefined
  );
}

/** What applying a batch of records changed: the attempts that ended, and the tasks that started. */
export interface Applied {
  ended: { task: number; attempt: number; state: TerminalState; at: number }[];
  started: { task: number; attempt: number; at: number }[];
}

/**
 * Apply one launch's records from a worker, in order (a start and its end in the same batch become one
 * transition). Idempotent.
 */
export function applyRecords(
  ledger: Ledger,
  jobId: number,
  launchId: number,
  records: AttemptRecord[],
): Applied {
  const out: Applied = { ended: [], started: [] };
  const held = new Map<string, StartRecord>();
  let first = Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  let busy = 0;
  for (const r of records) {
    if (r.type === 'start') {
      held.set(`${r.task}.${r.attempt}`, r);
      out.started.push({ task: r.task, attempt: r.attempt, at: r.at });
    } else if (r.type === 'end') {
      const key = `${r.task}.${r.attempt}`;
      const start = held.get(key);
      held.delete(key);
      if (start && recordAttempt(ledger, jobId, launchId, start, r)) {
        first = Math.min(first, start.at);
        last = Math.max(last, r.at);
        busy += r.at - start.at;
      } else {
        if (start) recordStart(ledger, jobId, launchId, start);
        recordEnd(ledger, jobId, launchId, r);
      }
      out.ended.push({ task: r.task, attempt: r.attempt, state: r.state, at: r.at });
    } else if (r.type === 'skip') {
      recordSkip(ledger, jobId, launchId, r);
      out.ended.push({ task: r.task, attempt: 0, state: 'cancelled', at: r.at });
    }
  }
  for (const s of held.values()) recordStart(ledger, jobId, launchId, s);
  if (Number.isFinite(first)) addLaunchTimes(ledger, launchId, first, last, busy);
  for (const s of out.started) {
    ledger
      .stmt('UPDATE pool_tasks SET tries = tries + 1 WHERE launch_id = ? AND task_id = ? AND attempt = ?')
      .run(launchId, s.task, s.attempt);
  }
  return out;
}

/** Close a pool launch when it is fully expanded and none of its tasks is queued or running. */
export function closePoolLaunchIfDone(ledger: Ledger, launchId: number): boolean {
  const pl = ledger
    .stmt('SELECT tasklist, expanded, total FROM pool_launches WHERE launch_id = ?')
    .get(launchId) as { expanded: number; total: number } | undefined;
  if (!pl) return false;
  const made = ledger.stmt('SELECT count(*) AS n FROM launch_tasks WHERE launch_id = ?').get(launchId) as {
    n: number;
  };
  if (made.n < pl.total) return false;
  const left = ledger
    .stmt("SELECT count(*) AS n FROM launch_tasks WHERE launch_id = ? AND state IN ('queued', 'running')")
    .get(launchId) as { n: number };
  if (left.n > 0) return false;
  ledger.stmt('UPDATE launches SET open = 0 WHERE id = ?').run(launchId);
  return true;
}
