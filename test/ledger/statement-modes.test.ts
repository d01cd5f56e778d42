import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cancelPlan } from '../../src/launch/cancel.js';
import { launch, makeJob, tempLedger } from '../helpers/ledger.js';

/**
 * Statements are cached by SQL text and shared: a mode one caller chains on (`.pluck()`, `.raw()`) must not reach
 * the next caller of the same text. It did once: the dashboard's cancel plucked the task ids of a query the Slurm
 * backend's cancel reads as rows, so scancel was given no tasks (caught by the real Slurm's cancel test).
 */
test('a statement comes back in its default mode whatever the last caller chained onto it', (t) => {
  const ledger = tempLedger(t);
  const job = makeJob(ledger, 'j', 3);
  const sql = 'SELECT id FROM tasks WHERE job_id = ? ORDER BY id';
  assert.deepEqual(ledger.stmt(sql).pluck().all(job.id), [1, 2, 3]);
  assert.deepEqual(ledger.stmt(sql).all(job.id), [{ id: 1 }, { id: 2 }, { id: 3 }]);
  assert.deepEqual(ledger.stmt(sql).raw(true).all(job.id), [[1], [2], [3]]);
  assert.deepEqual(ledger.stmt(sql).get(job.id), { id: 1 });
  // The case that broke: cancelPlan plucks; the Slurm backend's cancel reads the same text as rows.
  const l = ledger.write(() => launch(ledger, job, [1, 2, 3]));
  assert.deepEqual(cancelPlan(ledger, job.id)[0]?.ids, [1, 2, 3]);
  const rows = ledger
    .stmt(
      "SELECT task_id FROM launch_tasks WHERE launch_id = ? AND state IN ('queued', 'running') ORDER BY task_id",
    )
    .all(l.id);
  assert.deepEqual(rows, [{ task_id: 1 }, { task_id: 2 }, { task_id: 3 }]);
});
