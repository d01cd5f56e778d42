// Every query over a job's tasks builds its WHERE with taskWhere (task-filter.ts). Whatever the job's ids (with
// gaps), its tasks' states and the filter (ids consecutive or not, repeated, absent from the job; any states),
// it must pick exactly the tasks a plain reading of the table picks.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { taskWhere } from '../../src/ledger/task-filter.js';
import { STATES, type State } from '../../src/protocol/states.js';
import { syncJob, tempLedger } from '../helpers/ledger.js';

test('taskWhere picks exactly the tasks in the filter’s ids and states', (t) => {
  const ledger = tempLedger(t);
  let n = 0;
  const ids = fc.oneof(
    fc
      .tuple(fc.integer({ min: 0, max: 100 }), fc.nat(40))
      .map(([a, k]) => Array.from({ length: k }, (_, i) => a + i)),
    fc.array(fc.integer({ min: 0, max: 100 }), { maxLength: 30 }),
  );
  fc.assert(
    fc.property(
      fc.uniqueArray(fc.integer({ min: 1, max: 100 }), { minLength: 1, maxLength: 40 }),
      fc.array(fc.constantFrom(...STATES), { minLength: 40, maxLength: 40 }),
      fc.option(ids, { nil: undefined }),
      fc.option(fc.subarray([...STATES]), { nil: undefined }),
      fc.constantFrom('', 't'),
      (jobIds, states, pickIds, pickStates, alias) => {
        const job = syncJob(
          ledger,
          `j${n++}`,
          new Map(jobIds.map((id) => [id, { command: `echo ${id}`, tag: '' }])),
        );
        const set = ledger.stmt('UPDATE tasks SET state = ? WHERE job_id = ? AND id = ?');
        ledger.write(() => {
          for (const [i, id] of jobIds.entries()) set.run(states[i], job.id, id);
        });
        const stateOf = new Map(jobIds.map((id, i) => [id, states[i] as State]));
        const filter = {
          ...(pickIds ? { ids: pickIds } : {}),
          ...(pickStates ? { states: pickStates } : {}),
        };
        const w = taskWhere(filter, alias);
        const from = alias === '' ? 'tasks' : `tasks ${alias}`;
        const got = ledger
          .stmt(`SELECT ${alias === '' ? '' : `${alias}.`}id FROM ${from} WHERE ${w.sql} ORDER BY 1`)
          .pluck()
          .all(job.id, ...w.args);
        const want = [...jobIds]
          .sort((a, b) => a - b)
          .filter((id) => !pickIds || pickIds.includes(id))
          .filter((id) => !pickStates || pickStates.includes(stateOf.get(id)!));
        assert.deepEqual(got, want);
      },
    ),
    { numRuns: 200 },
  );
});
