import type { State } from '../protocol/states.js';
import type { Ledger } from './ledger.js';
import { type TaskFilter, taskWhere } from './task-filter.js';

/** One task's latest attempt as `drover results` needs it: where its result is, and what to show beside it. */
export interface ResultSourceRow {
  /** Task id. */
  task: number;
  /** The task's state (its latest attempt's, of its current command). */
  state: State;
  tag: string;
  /** The task's params, as the JSON text the ledger holds (`{}` when it has none). */
  params: string;
  /** Seconds the latest attempt ran; null when it has not ended (or never ran). */
  duration_s: number | null;
  /** The latest attempt's number; null when the task never ran. */
  attempt: number | null;
  /** The latest attempt's stdout log (a file, or a slice of a segment); null when the task never ran. */
  stdout_path: string | null;
  stdout_off: number | null;
  stdout_end: number | null;
  log_seq: number | null;
  /** The launch options (JSON) of the latest attempt's launch; null when the task never ran. */
  options: string | null;
}

/**
 * A job's tasks in id order with their latest attempt of their current command (docs/concepts.md invariant 1:
 * an attempt of an earlier command never gives a task its result), optionally only some ids and states.
 */
export function resultSources(ledger: Ledger, jobId: number, filter: TaskFilter = {}): ResultSourceRow[] {
  const w = taskWhere(filter, 't');
  return ledger
    .stmt(
      `SELECT t.id AS task, t.state, t.tag, t.params, a.duration AS duration_s, a.attempt, a.stdout_path,
         a.stdout_off, a.stdout_end, a.log_seq, l.options
       FROM tasks t
         LEFT JOIN attempts a ON a.job_id = t.job_id AND a.task_id = t.id AND a.attempt = (
           SELECT max(a2.attempt) FROM attempts a2
             JOIN launch_tasks lt ON lt.launch_id = a2.launch_id AND lt.task_id = a2.task_id AND lt.revision = t.revision
           WHERE a2.job_id = t.job_id AND a2.task_id = t.id)
         LEFT JOIN launches l ON l.id = a.launch_id
       WHERE ${w.sql} ORDER BY t.id`,
    )
    .all(jobId, ...w.args) as ResultSourceRow[];
}
