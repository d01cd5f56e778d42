import assert from 'node:assert/strict';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { idIn } from '../../src/ledger/id-list.js';

test('idIn selects exactly the given ids, as a range when they are consecutive and as a list otherwise', () => {
  const db = new Database(':memory:');
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY)');
  const insert = db.prepare('INSERT INTO t (id) VALUES (?)');
  for (let i = 1; i <= 300; i++) insert.run(i);
  const ids = fc.oneof(
    // Runs (a whole job, a tasklist's span), sets with holes, unsorted, repeated, out of the table, empty.
    fc
      .tuple(fc.integer({ min: -5, max: 320 }), fc.nat(330))
      .map(([a, n]) => Array.from({ length: n }, (_, i) => a + i)),
    fc.array(fc.integer({ min: -5, max: 320 }), { maxLength: 60 }),
  );
  fc.assert(
    fc.property(ids, (list) => {
      const where = idIn('id', list);
      const got = db
        .prepare(`SELECT id FROM t WHERE ${where.sql} ORDER BY id`)
        .pluck()
        .all(...where.params);
      const want = [...new Set(list)].filter((id) => id >= 1 && id <= 300).sort((a, b) => a - b);
      assert.deepEqual(got, want);
    }),
    { numRuns: 300 },
  );
  assert.match(idIn('id', [4, 5, 6]).sql, /BETWEEN/);
  assert.match(idIn('id', [4, 6]).sql, /json_each/);
  assert.match(idIn('id', [6, 5, 4]).sql, /json_each/);
  assert.match(idIn('id', []).sql, /json_each/);
  db.close();
});
