// The one keyset loop (keyset.ts): for any ids (with gaps), chunk size and filter, walking a query a chunk at a
// time gives every row once, in key order, no chunk empty or over its size; and a query over the page (an
// aggregate, as list --json's) ends where the rows do.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { keysetChunks, keysetPage } from '../../src/ledger/keyset.js';
import { taskWhere } from '../../src/ledger/task-filter.js';
import { syncJob, tempLedger } from '../helpers/ledger.js';

test('keysetChunks walks a query in key order, each row once, in chunks of at most its size', (t) => {
  const ledger = tempLedger(t);
  let n = 0;
  fc.assert(
    fc.property(
      fc.uniqueArray(fc.integer({ min: 1, max: 10_000 }), { maxLength: 80 }),
      fc.integer({ min: 1, max: 30 }),
      fc.option(fc.nat(3), { nil: undefined }),
      (ids, size, skip) => {
        const job = syncJob(
          ledger,
          `j${n++}`,
          new Map(ids.map((id) => [id, { command: `echo ${id}`, tag: '' }])),
        );
        const sorted = [...ids].sort((a, b) => a - b);
        const picked = skip === undefined ? sorted : sorted.filter((id) => id % 4 !== skip);
        const w = taskWhere(skip === undefined ? {} : { ids: picked }, 't');
        const page = keysetPage({ select: 't.id, t.command', from: 'tasks t', where: w.sql, key: 't.id' });
        const chunks = [...keysetChunks<[number, string]>(ledger, page, [job.id, ...w.args], size)];
        for (const c of chunks) assert.ok(c.length > 0 && c.length <= size, `a chunk of ${c.length}`);
        assert.deepEqual(
          chunks.flat(),
          picked.map((id) => [id, `echo ${id}`]),
        );
        // A query over the page: one row per chunk, its last key first.
        const outer = `SELECT max(id), group_concat(id, ',' ORDER BY id) FROM (${page.replace('t.id, t.command', 't.id')})`;
        const sums = [...keysetChunks<[number | null, string]>(ledger, outer, [job.id, ...w.args], size)];
        assert.deepEqual(sums.map((c) => c[0]![1]).join(','), picked.join(','));
      },
    ),
    { numRuns: 150 },
  );
});
