import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import fc from 'fast-check';
import { ingestLaunch } from '../../src/ledger/ingest.js';
import type { Ledger } from '../../src/ledger/ledger.js';
import { applyWorkerRecords } from '../../src/ledger/transitions.js';
import type { AttemptRecord, EndRecord } from '../../src/protocol/records.js';
import { end, launch, launchState, makeJob, start, taskRow, tempLedger } from '../helpers/ledger.js';
import { captureWarnings, line, Writer } from '../helpers/records.js';

/**
 * One ingestion path: a direct launch's record file (ingestLaunch) and a pool worker's report
 * (applyWorkerRecords) turn the same records into the same transitions, so the same rows; and a record whose
 * move the legal moves refuse is reported, with nothing of it written.
 */

/** Every row ingestion writes about a job's tasks and attempts, without what differs by design. */
function rows(ledger: Ledger, jobId: number, launchId: number): unknown {
  const all = (sql: string, id: number) => ledger.db.prepare(sql).all(id);
  return {
    tasks: all('SELECT id, state, exit_code, attempts, tries FROM tasks WHERE job_id = ? ORDER BY id', jobId),
    launchTasks: all(
      'SELECT task_id, state FROM launch_tasks WHERE launch_id = ? ORDER BY task_id',
      launchId,
    ),
    attempts: all(
      `SELECT task_id, attempt, state, exit_code, signal, started_at, ended_at, host, slot, pid, stdout_path,
         stderr_path, reason FROM attempts WHERE job_id = ? ORDER BY task_id, attempt`,
      jobId,
    ),
    launch: all('SELECT first_start, last_end, busy FROM launches WHERE id = ?', launchId),
    counts: all('SELECT state, n FROM job_counts WHERE job_id = ? AND n != 0 ORDER BY state', jobId),
  };
}

/** A task's records, as a runner writes them: attempts (all but the last retried), or a skip. */
const plan = fc.oneof(
  fc.record({
    retried: fc.array(fc.constantFrom('failed' as const, 'killed' as const), { maxLength: 2 }),
    last: fc.constantFrom('succeeded' as const, 'failed' as const, 'timeout' as const),
  }),
  fc.constant('skip' as const),
);

test('the same records through a record file and through a pool report make the same rows', async (t) => {
  const direct = tempLedger(t);
  const pool = tempLedger(t);
  const writer = new Writer(t);
  let runs = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.array(plan, { minLength: 1, maxLength: 4 }),
      fc.array(fc.nat({ max: 3 }), { maxLength: 4 }),
      async (plans, cuts) => {
        const name = `J${++runs}`;
        const ids = plans.map((_, i) => i + 1);
        const records: AttemptRecord[] = [];
        let at = 10;
        plans.forEach((p, i) => {
          const task = i + 1;
          if (p === 'skip') {
            records.push({ type: 'skip', task, at: at++, state: 'cancelled' });
            return;
          }
          [...p.retried, p.last].forEach((state, k, all) => {
            records.push(start(task, k + 1, at++));
            const e: EndRecord = end(task, k + 1, state, state === 'failed' ? 3 : null, at++);
            if (k < all.length - 1) e.retry = true;
            records.push(e);
          });
        });
        // Cut into batches at the same places for both (a batch boundary decides which transition applies).
        const bounds = [...new Set(cuts.map((c) => Math.floor((c / 4) * records.length)))].sort(
          (a, b) => a - b,
        );
        const batches: AttemptRecord[][] = [];
        let from = 0;
        for (const b of [...bounds, records.length]) {
          if (b > from) batches.push(records.slice(from, b));
          from = b;
        }

        const dJob = makeJob(direct, name, plans.length);
        const dLaunch = launch(direct, dJob, ids);
        const file = writer.file(dLaunch);
        fs.writeFileSync(file, line(writer.runner(dLaunch.id)));
        for (const b of batches) {
          fs.appendFileSync(file, b.map(line).join(''));
          ingestLaunch(direct, dLaunch);
        }

        const pJob = makeJob(pool, name, plans.length);
        const pLaunch = launch(pool, pJob, ids);
        for (const b of batches) applyWorkerRecords(pool, pLaunch, b);

        assert.deepEqual(rows(pool, pJob.id, pLaunch.id), rows(direct, dJob.id, dLaunch.id));
      },
    ),
    { numRuns: 60 },
  );
});

test('a record the legal moves refuse is reported with its file, and nothing of it is written', (t) => {
  const ledger = tempLedger(t);
  const warnings = captureWarnings(ledger);
  const job = makeJob(ledger, 'J', 2);
  const l = launch(ledger, job, [1]);
  const w = new Writer(t);
  const file = w.file(l);
  fs.writeFileSync(
    file,
    line(w.runner(l.id)) +
      line(start(1, 1, 100)) +
      line(end(1, 1, 'succeeded', 0, 101)) +
      // A second attempt of a task that succeeded in this launch, and a task the launch does not have.
      line(start(1, 2, 102)) +
      line(end(1, 2, 'failed', 1, 103)) +
      line(start(2, 1, 104)),
  );
  ingestLaunch(ledger, l);
  assert.deepEqual(taskRow(ledger, job, 1), {
    state: 'succeeded',
    exit_code: 0,
    attempts: 1,
    last_launch_id: l.id,
  });
  assert.equal(launchState(ledger, l.id, 2), undefined);
  assert.equal(taskRow(ledger, job, 2).state, 'pending');
  assert.deepEqual(
    ledger.db.prepare('SELECT task_id, attempt FROM attempts ORDER BY task_id, attempt').all(),
    [{ task_id: 1, attempt: 1 }],
    'no attempt row of the refused records',
  );
  assert.deepEqual(warnings, [
    `${file}: the end record of task 1 attempt 2: task 1 of launch ${l.id} may not go from succeeded to failed: not applied`,
    `${file}: the start record of task 2 attempt 1: launch ${l.id} has no task 2: not applied`,
  ]);
  assert.equal(ingestLaunch(ledger, l), 0);
  assert.equal(warnings.length, 2, 'reported once: the records are behind the ingested offset now');
});
