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
