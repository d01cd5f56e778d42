import type { TaskRow } from './jobs.js';
import { keysetChunks, keysetPage } from './keyset.js';
import { NO_LATEST } from './latest-attempt.js';
import type { Ledger } from './ledger.js';
import { type TaskFilter, taskWhere } from './task-filter.js';

/**
 * A job's tasks as the JSON lines of `list --json` (taskJson's fields, in its order; `jobname` first when
 * given), a chunk of tasks at a time, each chunk the UTF-8 bytes of lines joined by `,\n`. SQLite writes the JSON,
 * and nothing per task is looked up or formatted beyond the task's own row: the latest attempt's members are kept
 * on it (`tasks.latest`, latest-attempt.ts), and `params` is spliced in as the text it is stored as
 * (JSON.stringify's, never anything else: see syncJobTasks; json(params) would parse and print it again, ~0.2 s
 * more for 100,000 tasks). Chunks come as bytes (a BLOB of the text), not strings: decoding 25 MB into V8 strings
 * and encoding them again for stdout cost ~20 ms. Chunks are small on purpose (1,000 tasks, ~250 KB): big strings
 * cost more to allocate and hand to V8 than the extra statement steps.
 *
 * A whole job (no filter) is read as ranges of ids along the primary key, each aggregated as it is scanned: the
 * aggregate gets the rows in the order of the key, so no ORDER BY is needed inside it. With one, SQLite sorts a
 * copy of every line first (~50 ms of ~0.15 s for 100,000 tasks). A filter may be answered through another index
 * (the state index) or from a list of ids: its lines are put in id order by the aggregate's ORDER BY.
 * test/ledger/task-json.test.ts checks both forms against the server’s task objects: ids with gaps, filters, chunks.
 */
export function* taskJsonChunks(
  ledger: Ledger,
  job: { id: number; name: string },
  filter: TaskFilter = {},
  withJobname = false,
  size = 1000,
): Generator<Buffer> {
  // One printf, not json_object and concatenations: each || copies the line so far, and json_object formats
  // values by their type at run time (~10% of the query). The strings are quoted as json_object quotes them.
  const line = `printf('{${withJobname ? '"jobname":%s,' : ''}"task":%d,"command":%s,"tag":%s,"state":"%s","exit_code":%s,"attempts":%d,"requeues":%d,"launch":%s,%s,"params":%s}',
    ${withJobname ? 'json_quote(?), ' : ''}t.id, json_quote(t.command), json_quote(t.tag), t.state, ifnull(t.exit_code, 'null'), t.tries, t.requeues,
    ifnull('"' || t.last_launch_id || '"', 'null'), ifnull(t.latest, '${NO_LATEST}'), t.params)`;
  const name = withJobname ? [job.name] : [];
  if (filter.ids === undefined && filter.states === undefined) {
    // Windows of `size` ids, not of `size` tasks (the one walk that is not keysetChunks): finding where the next
    // `size` tasks end would walk the table's rows (its key is the table) a second time (~3 ms of ~100 for 100,000
    // tasks). A window past a gap is empty: then the next window starts at the next id there is, so ids far apart
    // cost a seek each, not a window each.
    // Its own SQL texts, so raw mode never reaches a statement other code shares through the cache.
    const chunk = ledger.stmt(
      `SELECT CAST(group_concat(${line}, ',' || char(10)) AS BLOB)
       FROM tasks t WHERE t.job_id = ? AND t.id > ? AND t.id <= ?`,
    );
    const next = ledger.stmt('SELECT min(id) FROM tasks WHERE job_id = ? AND id > ?');
    let after = 0;
    for (;;) {
      const text = chunk.pluck().get(...name, job.id, after, after + size) as Buffer | null;
      if (text !== null) {
        yield text;
        after += size;
        continue;
      }
      const id = next.pluck().get(job.id, after) as number | null;
      if (id === null) return;
      after = id - 1;
    }
  }
  const w = taskWhere(filter, 't');
  const page = keysetPage({ select: `t.id, ${line} AS j`, from: 'tasks t', where: w.sql, key: 't.id' });
  const sql = `SELECT max(id) AS last, CAST(group_concat(j, ',' || char(10) ORDER BY id) AS BLOB) AS text FROM (${page})`;
  for (const [row] of keysetChunks<[number | null, Buffer]>(ledger, sql, [...name, job.id, ...w.args], size))
    yield row![1];
}

/** A task as the scripting contract shows it (`drover list --json`, the server's task list). */
export function taskJson(
  t: TaskRow & {
    started_at: number | null;
    ended_at: number | null;
    duration: number | null;
    host: string | null;
  },
) {
  return {
    task: t.id,
    command: t.command,
    tag: t.tag,
    state: t.state,
    exit_code: t.exit_code,
    attempts: t.attempts,
    requeues: t.requeues ?? 0,
    launch: t.last_launch_id === null ? null : String(t.last_launch_id),
    started_at: t.started_at,
    ended_at: t.ended_at,
    duration_s: t.duration,
    host: t.host,
    params: t.params,
  };
}
