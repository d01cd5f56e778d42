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

/**
 * The duration spread of `n` sorted durations, of which `at(i)` gives the i-th (0-based). Reads only the ranks
 * it needs (at most five), so the ledger can answer each from its index instead of handing over every duration.
 */
export function spreadAt(n: number, at: (rank: number) => number): DurationSpread {
  if (n === 0) return { min: null, median: null, p95: null, max: null };
  const mid = n % 2 === 1 ? at((n - 1) / 2) : (at(n / 2 - 1) + at(n / 2)) / 2;
  return { min: at(0), median: mid, p95: at(Math.ceil(0.95 * n) - 1), max: at(n - 1) };
}

/** The duration spread of the sorted durations `d` (pure: tested with plain values). */
export function spreadOf(d: readonly number[]): DurationSpread {
  return spreadAt(d.length, (i) => d[i]!);
}

/**
 * The spread of the durations of a job's attempts that ended with a known start, of the commands its tasks have
 * now, to the millisecond. Counted, then read rank by rank along the attempts_duration index (duration is a plain
 * column since schema 8, so the index answers alone): 100,000 attempts cost a few ms, not a JavaScript number each.
 * A job whose commands never changed has no task_revisions: then every attempt is its tasks' own and the index
 * alone answers; otherwise each attempt is joined to its task and launch to keep only the current commands'.
 */
export function jobSpread(ledger: Ledger, jobId: number): DurationSpread {
  return ledger.read(() => {
    const changed =
      ledger.stmt('SELECT 1 FROM task_revisions WHERE job_id = ? LIMIT 1').get(jobId) !== undefined;
    const from = changed
      ? `FROM attempts a INDEXED BY attempts_duration
           JOIN tasks t ON t.job_id = a.job_id AND t.id = a.task_id
           JOIN launch_tasks lt ON lt.launch_id = a.launch_id AND lt.task_id = a.task_id AND lt.revision = t.revision
         WHERE a.job_id = ? AND a.duration IS NOT NULL`
      : 'FROM attempts a INDEXED BY attempts_duration WHERE a.job_id = ? AND a.duration IS NOT NULL';
    const n = ledger.stmt(`SELECT count(*) ${from}`).pluck().get(jobId) as number;
    // A rank is counted from the nearer end: the max and p95 read a few rows from the top, not all below them.
    const up = ledger.stmt(`SELECT round(a.duration, 3) ${from} ORDER BY a.duration LIMIT 1 OFFSET ?`);
    const down = ledger.stmt(`SELECT round(a.duration, 3) ${from} ORDER BY a.duration DESC LIMIT 1 OFFSET ?`);
    return spreadAt(n, (i) =>
      i < n / 2 ? (up.pluck().get(jobId, i) as number) : (down.pluck().get(jobId, n - 1 - i) as number),
    );
  });
}
