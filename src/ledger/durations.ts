import type { Ledger } from './ledger.js';

/** The spread of a job's finished attempts' durations, in seconds; every field null when none finished. */
export interface DurationSpread {
  min: number | null;
  /** The middle duration (the mean of the two middle ones for an even count). */
  median: number | null;
  /** The 95th percentile, nearest rank: the smallest duration at least 95% of the attempts do not exceed. */
  p95: number | null;
  max: number | null;
}

/** The duration spread of the sorted durations `d` (pure: tested with plain values). */
export function spreadOf(d: readonly number[]): DurationSpread {
  const n = d.length;
  if (n === 0) return { min: null, median: null, p95: null, max: null };
  const mid = n % 2 === 1 ? d[(n - 1) / 2]! : (d[n / 2 - 1]! + d[n / 2]!) / 2;
  return { min: d[0]!, median: mid, p95: d[Math.ceil(0.95 * n) - 1]!, max: d[n - 1]! };
}

/**
 * The durations of a job's attempts that ended with a known start, of the commands its tasks have now,  sorted,
 * to the millisecond.
 * A job whose commands never changed has no task_revisions: then every attempt is its tasks' own and the
 * durations come straight from the attempts_duration index, without a join (~100,000 in a few ms).
 */
export function jobDurations(ledger: Ledger, jobId: number): number[] {
  const changed =
    ledger.stmt('SELECT 1 FROM task_revisions WHERE job_id = ? LIMIT 1').get(jobId) !== undefined;
  const sql = changed
    ? `SELECT round(a.duration, 3) FROM attempts a INDEXED BY attempts_duration
         JOIN tasks t ON t.job_id = a.job_id AND t.id = a.task_id
         JOIN launch_tasks lt ON lt.launch_id = a.launch_id AND lt.task_id = a.task_id AND lt.revision = t.revision
       WHERE a.job_id = ? AND a.duration IS NOT NULL ORDER BY a.duration`
    : `SELECT round(duration, 3) FROM attempts INDEXED BY attempts_duration
       WHERE job_id = ? AND duration IS NOT NULL ORDER BY duration`;
  return ledger.stmt(sql).pluck().all(jobId) as number[];
}
