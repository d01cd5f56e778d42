// The state index holds only tasks that left pending (migration 7). Whatever states a job's tasks are in, the
// queries that pick tasks by state (--failed, --unfinished, list --state, the dashboard's filter) must find exactly
// the tasks a plain reading of the table finds; and a ledger made before migration 7 must answer the same once
// migrated.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { taskPage } from '../../src/ledger/dashboard.js';
import { Ledger } from '../../src/ledger/ledger.js';
import { MIGRATIONS } from '../../src/ledger/migrations.js';
import { migrate } from '../../src/ledger/open.js';
import { taskIdsWhere } from '../../src/ledger/queries.js';
import { taskWhere } from '../../src/ledger/task-filter.js';
import { isFailedState, isUnfinishedState, STATES, type State } from '../../src/protocol/states.js';
import { ledgerAtSchema, makeJob, tempLedger } from '../helpers/ledger.js';

/** Put the job's tasks in these states (straight into the table: any mix, as history may leave it). */
function setStates(ledger: Ledger, jobId: number, states: readonly State[]): void {
  const set = ledger.stmt('UPDATE tasks SET state = ? WHERE job_id = ? AND id = ?');
  ledger.write(() => {
    for (const [i, s] of states.entries()) set.run(s, jobId, i + 1);
  });
}

function expected(states: readonly State[], pick: (s: State) => boolean): number[] {
  return states.flatMap((s, i) => (pick(s) ? [i + 1] : []));
}

const stateArb = fc.constantFrom(...STATES);

test('tasks picked by state are the same through the partial index as in the table', (t) => {
  const ledger = tempLedger(t);
  const job = makeJob(ledger, 'j', 40);
  fc.assert(
    fc.property(
      fc.array(stateArb, { minLength: 40, maxLength: 40 }),
      fc.subarray([...STATES]),
      (states, picked) => {
        setStates(ledger, job.id, states);
        for (const pick of [isFailedState, isUnfinishedState, (s: State) => picked.includes(s)])
          assert.deepEqual(taskIdsWhere(ledger, job.id, pick), expected(states, pick));
        // `list --state` and the dashboard's filter, which say state != 'pending' when the states imply it.
        const want = expected(states, (s) => picked.includes(s));
        const w = taskWhere({ states: picked });
        assert.deepEqual(
          ledger
            .stmt(`SELECT id FROM tasks WHERE ${w.sql} ORDER BY id`)
            .pluck()
            .all(job.id, ...w.args),
          want,
        );
        const page = taskPage(ledger, job.id, {
          states: picked,
          sort: 'id',
          desc: false,
          offset: 0,
          limit: 100,
        });
        assert.equal(page.total, want.length);
        assert.deepEqual(
          page.rows.map((r) => r.id),
          want,
        );
        const indexed = ledger
          .stmt("SELECT count(*) FROM tasks INDEXED BY tasks_state WHERE job_id = ? AND state != 'pending'")
          .pluck()
          .get(job.id);
        assert.equal(indexed, states.filter((s) => s !== 'pending').length);
      },
    ),
    { numRuns: 150 },
  );
});

test('a ledger of schema 6 gets the partial index and answers the same', (t) => {
  // The schema as drover made it before migration 7, with a job in it.
  const { paths, old } = ledgerAtSchema(t, 6);
  old.exec(
    `INSERT INTO jobs (id, name, created_at, jobfile, task_count, max_task) VALUES (1, 'j', 0, '', 5, 5)`,
  );
  const states: State[] = ['pending', 'failed', 'succeeded', 'pending', 'error'];
  const insert = old.prepare(
    "INSERT INTO tasks (job_id, id, command, tag, state) VALUES (1, ?, 'echo', '', ?)",
  );
  for (const [i, s] of states.entries()) insert.run(i + 1, s);
  old.close();

  const ledger = Ledger.open(paths);
  t.after(() => ledger.close());
  assert.equal(ledger.db.pragma('user_version', { simple: true }), MIGRATIONS.length);
  const sql = ledger.stmt("SELECT sql FROM sqlite_master WHERE name = 'tasks_state'").pluck().get() as string;
  assert.match(sql, /WHERE state != 'pending'/);
  assert.deepEqual(taskIdsWhere(ledger, 1, isFailedState), [2, 5]);
  assert.deepEqual(taskIdsWhere(ledger, 1, isUnfinishedState), [1, 2, 4, 5]);
  migrate(ledger.db); // again: nothing to do
  assert.deepEqual(taskIdsWhere(ledger, 1, isFailedState), [2, 5]);
});
