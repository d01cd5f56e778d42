/**
 * The latest attempt of a task, as SQL to join on `tasks t`: the newest attempt in the task's newest launch
 * (`last_launch_id`), the launch its state follows. A task whose command changed has no newest launch until it
 * is launched again (the sync clears it), so attempts of an earlier command never show as its own
 * (docs/concepts.md, invariant 1); a task queued in a new launch has no attempt there yet, so none shows.
 */
// `+x.launch_id` keeps SQLite on the primary key (job_id, task_id, attempt) instead of attempts_launch, whose
// rows then need a second lookup: ~15% of `list --json`'s query on 100,000 tasks.
export const LATEST_ATTEMPT_JOIN = `LEFT JOIN attempts a ON a.job_id = t.job_id AND a.task_id = t.id AND a.attempt =
  (SELECT max(x.attempt) FROM attempts x WHERE x.job_id = t.job_id AND x.task_id = t.id AND +x.launch_id = t.last_launch_id)`;

/** SQL: the latest attempt's duration in seconds, rounded to the millisecond (records carry milliseconds). */
export const LATEST_DURATION = 'round(a.duration, 3)';
