// ledger.writeUnchecked sets SQLite's foreign key and CHECK constraints aside for a prelaunch's bulk insert; every
// other statement of the connection, before and after, must still be checked — also statements prepared before
// it, and also after its transaction fails.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Ledger } from '../../src/ledger/ledger.js';
import { makeJob, tempLedger } from '../helpers/ledger.js';

const INSERT = 'INSERT INTO tasks (job_id, id, command, tag, state) VALUES (?, ?, ?, ?, ?)';

/** Both kinds of bad row are refused, through a statement of the ledger's cache. */
function assertChecked(ledger: Ledger, jobId: number): void {
  assert.throws(
    () => ledger.stmt(INSERT).run(jobId, 1000, 'x', '', 'no-such-state'),
    /CHECK constraint failed/,
  );
  assert.throws(
    () => ledger.stmt(INSERT).run(jobId + 999, 1, 'x', '', 'pending'),
    /FOREIGN KEY constraint failed/,
  );
}

test('writeUnchecked sets the checks aside for its transaction only', (t) => {
  const ledger = tempLedger(t);
  const job = makeJob(ledger, 'j', 2);
  assertChecked(ledger, job.id); // prepared here, with the checks

  const inside = ledger.writeUnchecked(() => {
    ledger.stmt(INSERT).run(job.id, 3, 'echo 3', '', 'pending');
    return ledger.db.pragma('ignore_check_constraints', { simple: true });
  });
  assert.equal(inside, 1, 'the CHECK constraints are off inside');
  assertChecked(ledger, job.id);
  assert.equal(ledger.db.pragma('ignore_check_constraints', { simple: true }), 0);
  assert.equal(ledger.db.pragma('foreign_keys', { simple: true }), 1);
});

test('writeUnchecked puts the checks back when its transaction fails, and rolls back what it wrote', (t) => {
  const ledger = tempLedger(t);
  const job = makeJob(ledger, 'j', 2);
  assert.throws(
    () =>
      ledger.writeUnchecked(() => {
        ledger.stmt(INSERT).run(job.id, 3, 'echo 3', '', 'no-such-state');
        throw new Error('the prelaunch failed');
      }),
    /the prelaunch failed/,
  );
  assert.equal(ledger.db.inTransaction, false);
  assert.equal(ledger.stmt('SELECT count(*) FROM tasks WHERE job_id = ?').pluck().get(job.id), 2);
  assertChecked(ledger, job.id);
});
