import type { EndRecord, StartRecord } from '../../protocol/records.js';
import type { State } from '../../protocol/states.js';
import { latestOfSql } from '../latest-attempt.js';
import type { Ledger } from '../ledger.js';
import { legalFromSql } from '../moves.js';
import { ATTEMPT_COLUMNS, ATTEMPT_VALUES, attemptValues, taskStateAfter } from './attempts.js';

/**
 * Transition `recordAttempts`: many whole attempts at once, each exactly what `recordAttempt` makes of a start
 * and its end (queued → running → a terminal state, or queued for a retry). The attempts are grouped by what
 * they do to their task (the state it moves to, the attempt number, the exit code): each group moves its
 * tasks in the launch and in the tasks table with one UPDATE each, their ids given as one JSON array. Done one
 * by one, those two updates and the count triggers they fire were most of an ingestion's cost (100,000 moves in
 * launch_tasks: 0.6–1.3 s of CPU one statement each, 0.25–0.35 s as one statement). The attempt rows are
 * inserted 64 to a statement, their values bound as always (carried in JSON they cost more, not less).
 *
 * Not every attempt goes this way: the ones whose move the legal moves refuse, whose task the launch does not
 * have, or whose attempt row exists already (a replay) are found first, one query per group, and left out, and
 * so are groups too small to gain from it: the caller applies those records one by one, as before, so they are
 * recorded, refused or unchanged exactly as they were. The caller gives one attempt per task, the task's only
 * records in its batch (so the state each move starts from is the one read here), and adds the launch's time
 * totals. Returns the tasks whose attempt was recorded.
 */
export function recordAttempts(
  ledger: Ledger,
  jobId: number,
  launchId: number,
  pairs: Iterable<readonly [StartRecord, EndRecord]>,
): Set<number> {
  if (!ledger.db.inTransaction) return ledger.write(() => recordAttempts(ledger, jobId, launchId, pairs));
  const done = new Set<number>();
  for (const group of groupsOf(pairs)) {
    if (group.pairs.length < MIN_GROUP) continue;
    const { to, attempt, exitCode } = group;
    const params = {
      launch: launchId,
      job: jobId,
      attempt,
      tasks: JSON.stringify(group.pairs.map(([s]) => s.task)),
    };
    const others = new Set(ledger.stmt(othersSql(to)).pluck().all(params) as number[]);
    let todo = group.pairs;
    if (others.size > 0) {
      todo = todo.filter(([s]) => !others.has(s.task));
      if (todo.length === 0) continue;
      params.tasks = JSON.stringify(todo.map(([s]) => s.task));
    }
    insertAttempts(ledger, jobId, launchId, todo);
    const move = { launch: launchId, to };
    const follow = { launch: launchId, job: jobId, attempt, to, exit_code: exitCode };
    const ranges = runsOf(todo.map(([s]) => s.task));
    if (ranges.length <= MAX_RANGES) {
      for (const [first, last] of ranges) {
        ledger.stmt(MOVE_RANGE).run({ ...move, first, last });
        ledger.stmt(FOLLOW_RANGE).run({ ...follow, first, last });
      }
    } else {
      ledger.stmt(MOVE_IN_LAUNCH).run({ ...move, tasks: params.tasks });
      ledger.stmt(FOLLOW_IN_TASKS).run({ ...follow, tasks: params.tasks });
    }
    for (const [s] of todo) done.add(s.task);
  }
  return done;
}

/**
 * Insert the attempt rows, up to ROWS to a statement: a statement's own cost (its step, its call from
 * JavaScript) is then paid once per many attempts. A batch is cut into statements of ROWS, then of each smaller
 * power of two it still holds (a pool worker's report of ~50 attempts: 32, 16, 2 — not 50 statements of one,
 * which cost twice as much). The values are bound, as one row at a time would bind them.
 */
function insertAttempts(
  ledger: Ledger,
  jobId: number,
  launchId: number,
  pairs: readonly (readonly [StartRecord, EndRecord])[],
): void {
  const values: unknown[] = [];
  let i = 0;
  for (let rows = ROWS; rows >= 1; rows >>= 1) {
    if (i + rows > pairs.length) continue;
    const insert = ledger.stmt(INSERTS.get(rows)!);
    for (; i + rows <= pairs.length; i += rows) {
      values.length = 0;
      for (let k = i; k < i + rows; k++) values.push(...attemptValues(jobId, launchId, ...pairs[k]!));
      insert.run(values);
    }
  }
}

/** Attempts per INSERT statement, at most (ATTEMPT_VALUES values each); a power of two. */
const ROWS = 64;

function insertSql(rows: number): string {
  const row = `(${Array(ATTEMPT_VALUES).fill('?').join(', ')})`;
  return `INSERT INTO attempts (${ATTEMPT_COLUMNS})
  VALUES ${Array(rows).fill(row).join(', ')}`;
}

/** The INSERT of n rows, for n = ROWS and each smaller power of two. */
const INSERTS = new Map<number, string>();
for (let rows = ROWS; rows >= 1; rows >>= 1) INSERTS.set(rows, insertSql(rows));

/**
 * The runs of consecutive ids in `ids` (distinct), as [first, last], in order. A group of tasks that ran in
 * order (the usual case) is a few runs, which its UPDATEs walk as ranges of the primary key: 15–25% cheaper
 * than looking each id up (`IN`).
 */
function runsOf(ids: number[]): [number, number][] {
  const sorted = [...ids].sort((a, b) => a - b);
  const runs: [number, number][] = [];
  for (const id of sorted) {
    const run = runs.at(-1);
    if (run !== undefined && id === run[1] + 1) run[1] = id;
    else runs.push([id, id]);
  }
  return runs;
}

/** Up to this many runs, a group's UPDATEs go run by run; past it, by one list of ids. */
const MAX_RANGES = 8;

/** Groups smaller than this go one attempt at a time (a group costs three statements of its own). */
const MIN_GROUP = 16;

/** Attempts that do the same to their tasks. */
interface Group {
  to: State;
  attempt: number;
  exitCode: number | null;
  pairs: (readonly [StartRecord, EndRecord])[];
}

function groupsOf(pairs: Iterable<readonly [StartRecord, EndRecord]>): Iterable<Group> {
  const groups = new Map<string, Group>();
  for (const pair of pairs) {
    const [s, e] = pair;
    // A requeue (rare) counts on its task too: recordAttempt, one by one, does that.
    if (e.requeue) continue;
    const to = taskStateAfter(e);
    const key = `${to} ${s.attempt} ${e.exit_code}`;
    let g = groups.get(key);
    if (!g) {
      g = { to, attempt: s.attempt, exitCode: e.exit_code, pairs: [] };
      groups.set(key, g);
    }
    g.pairs.push(pair);
  }
  return groups.values();
}

const TASKS = 'SELECT value FROM json_each(@tasks)';

/** The tasks of a group `recordAttempt` would not record: refused (no such task in the launch, an illegal move) or a replay. */
const OTHERS = new Map<State, string>();
function othersSql(to: State): string {
  let sql = OTHERS.get(to);
  if (sql === undefined) {
    sql = `SELECT j.value FROM json_each(@tasks) j
      WHERE NOT EXISTS (SELECT 1 FROM launch_tasks lt WHERE lt.launch_id = @launch AND lt.task_id = j.value
          AND ${legalFromSql('lt.state', to)})
        OR EXISTS (SELECT 1 FROM attempts a WHERE a.job_id = @job AND a.task_id = j.value AND a.attempt = @attempt)`;
    OTHERS.set(to, sql);
  }
  return sql;
}

/** The tasks' state in the launch: checked above, so no guard here (unlike moveInLaunch). */
const MOVE_IN_LAUNCH = `UPDATE launch_tasks SET state = @to WHERE launch_id = @launch AND task_id IN (${TASKS})`;

const MOVE_RANGE = `UPDATE launch_tasks SET state = @to WHERE launch_id = @launch AND task_id BETWEEN @first AND @last`;

/**
 * The task rows, as recordAttempt updates them (the state follows only when this launch is the task's newest),
 * with their latest attempt made again from the attempts just inserted (latest-attempt.ts).
 */
const FOLLOW = `UPDATE tasks SET attempts = max(attempts, @attempt), tries = tries + (last_launch_id IS @launch),
    state = CASE WHEN last_launch_id = @launch THEN @to ELSE state END,
    exit_code = CASE WHEN last_launch_id = @launch THEN @exit_code ELSE exit_code END,
    latest = ${latestOfSql('max(tasks.attempts, @attempt)')}
  WHERE job_id = @job`;
const FOLLOW_IN_TASKS = `${FOLLOW} AND id IN (${TASKS})`;
const FOLLOW_RANGE = `${FOLLOW} AND id BETWEEN @first AND @last`;
