import type { Ledger } from './ledger.js';

/**
 * The latest attempt of a task, as SQL to join on `tasks t`: the attempt numbered `t.attempts` (the highest
 * number the task's id has had), when it belongs to the task's newest launch (`last_launch_id`), the launch its
 * state follows. A launch numbers its attempts after every earlier one (`attempts + 1` at creation, up with each
 * retry), and an earlier launch's processes are gone before a rerun starts (docs/concepts.md, invariant 2), so the
 * newest launch's latest attempt is the highest-numbered one. A task whose command changed has no newest launch
 * until it is launched again (the sync clears it), so attempts of an earlier command never show as its own
 * (invariant 1); a task queued in a new launch has no attempt there yet, so none shows.
 *
 * One primary-key lookup per task: `+a.launch_id` keeps SQLite off attempts_launch (whose rows then need a
 * second lookup), and a correlated `max(attempt)` for the launch cost a third (~25% of `list --json`'s query).
 */
export const LATEST_ATTEMPT_JOIN = `LEFT JOIN attempts a
  ON a.job_id = t.job_id AND a.task_id = t.id AND a.attempt = t.attempts AND +a.launch_id = t.last_launch_id`;

/** SQL: the latest attempt's duration in seconds, rounded to the millisecond (records carry milliseconds). */
export const LATEST_DURATION = 'round(a.duration, 3)';

/**
 * SQL: the members `"started_at":…,"ended_at":…,"duration_s":…,"host":…` of an attempt `a` as `list --json`
 * prints them (json_object's text of each value, without the braces). `tasks.latest` keeps them for each task's
 * latest attempt (schema 9), so `list --json` neither joins nor formats numbers: of its query's ~0.3 s for
 * 100,000 tasks, the join took ~0.06 s and turning three REALs into text ~0.05 s.
 */
export const LATEST_MEMBERS = `rtrim(substr(json_object('started_at', a.started_at, 'ended_at', a.ended_at,
  'duration_s', ${LATEST_DURATION}, 'host', a.host), 2), '}')`;

/** The members of `tasks.latest` for a task with no latest attempt (a NULL `latest`). */
export const NO_LATEST = '"started_at":null,"ended_at":null,"duration_s":null,"host":null';

/**
 * SQL: `tasks.latest` made again from the attempts, for the tasks a WHERE on `tasks` picks — what the latest
 * attempt join gives, by definition. Every transition that changes an attempt's start, end or host, or which
 * attempt is a task's latest (its `attempts` or `last_launch_id`), runs it for the tasks it changed, in its own
 * transaction, or sets `latest` in the update that changes them (latestOfSql); one that points tasks at a new
 * launch, or none, sets `latest` to NULL itself (no attempt of theirs is there yet). test/ledger/latest.test.ts
 * checks the two agree after any mix of transitions.
 */
export function refreshLatestSql(where: string): string {
  return `UPDATE tasks SET latest = ${latestOfSql('tasks.attempts')} WHERE ${where}`;
}

/**
 * SQL: the `latest` of the `tasks` row being updated once its `attempts` is `attempts` (an expression on the
 * row's old values, as an UPDATE's SET sees them): for an update that raises the count and can set `latest` in
 * the same write of the row, where a refresh after it would write the row a second time (~9% more ingesting).
 */
export function latestOfSql(attempts: string): string {
  return `(SELECT ${LATEST_MEMBERS} FROM attempts a
      WHERE a.job_id = tasks.job_id AND a.task_id = tasks.id AND a.attempt = ${attempts}
        AND a.launch_id = tasks.last_launch_id)`;
}

/** Make one task's `latest` again from its attempts (see refreshLatestSql). */
export function refreshLatest(ledger: Ledger, jobId: number, taskId: number): void {
  ledger.stmt(refreshLatestSql('job_id = ? AND id = ?')).run(jobId, taskId);
}
