// `list --json` has SQLite write each task's line from its row alone (task-json.ts, taskJsonChunks): a whole job
// along the primary key, aggregated without sorting; a filtered one sorted by id. The server's task list makes
// the same objects in JavaScript from the latest attempt join (taskJson, beside it). For any job — ids with gaps,
// tasks in every state, run once or more, with or without an end or a host — and any filter and chunk size, the
// two must be the same objects in the same order.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { listTaskDetails } from '../../src/ledger/task-details.js';
import { taskJson, taskJsonChunks } from '../../src/ledger/task-json.js';
import { recordAttempt, recordEndWithoutStart, recordStart } from '../../src/ledger/transitions.js';
import { STATES, type State } from '../../src/protocol/states.js';
import { end, launch, start, syncJob, tempLedger } from '../helpers/ledger.js';

const END_STATES = ['succeeded', 'failed', 'killed', 'timeout', 'lost'] as const;

test('list --json lines are the server’s task objects, in id order, for any job, filter and chunk size', (t) => {
  const ledger = tempLedger(t);
  let n = 0;
  fc.assert(
    fc.property(
      fc.uniqueArray(fc.integer({ min: 1, max: 300 }), { minLength: 1, maxLength: 60 }),
      fc.array(fc.nat(5), { minLength: 60, maxLength: 60 }),
      fc.integer({ min: 1, max: 25 }),
      fc.option(fc.subarray([...STATES], { minLength: 1 })),
      fc.option(fc.nat(), { nil: undefined }),
      fc.boolean(),
      (ids, fates, size, states, pickSeed, withJobname) => {
        const name = `j${n++}`;
        const entries = new Map(
          ids.map((id) => [
            id,
            { command: `echo "${id}" é\t${'x'.repeat(id % 7)}`, tag: id % 3 ? `t${id}` : '' },
          ]),
        );
        const job = syncJob(ledger, name, entries);
        const sorted = [...ids].sort((a, b) => a - b);
        const launched = sorted.filter((_, i) => fates[i]! > 0);
        if (launched.length > 0) {
          const l = launch(ledger, job, launched);
          ledger.write(() => {
            for (const [i, id] of sorted.entries()) {
              const fate = fates[i]!;
              const at = 1_700_000_000 + id / 3;
              if (fate === 2) recordStart(ledger, job.id, l.id, { ...start(id, 1, at), host: `h"${id % 2}` });
              else if (fate === 3) recordEndWithoutStart(ledger, job.id, l.id, end(id, 1, 'failed', 2, at));
              else if (fate >= 4)
                recordAttempt(
                  ledger,
                  job.id,
                  l.id,
                  start(id, 1, at),
                  end(id, 1, END_STATES[id % 5]!, id % 5 ? null : 0, at + id / 1000),
                );
            }
          });
        }
        const filter = {
          ...(states ? { states: states as State[] } : {}),
          ...(pickSeed !== undefined ? { ids: sorted.filter((id) => (id + pickSeed) % 3 !== 0) } : {}),
        };
        const text = [...taskJsonChunks(ledger, job, filter, withJobname, size)]
          .map((b) => b.toString())
          .join(',\n');
        const got = JSON.parse(`[${text}]`) as Record<string, unknown>[];
        const want = listTaskDetails(ledger, job.id, filter).map((d) => ({
          ...(withJobname ? { jobname: name } : {}),
          ...taskJson(d),
        }));
        assert.deepEqual(got, want);
        for (const row of got) assert.deepEqual(Object.keys(row), Object.keys(want[0] ?? row));
      },
    ),
    { numRuns: 120 },
  );
});
