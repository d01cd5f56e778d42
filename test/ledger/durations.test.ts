import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { jobSpread, spreadOf } from '../../src/ledger/durations.js';
import { Ledger } from '../../src/ledger/ledger.js';
import { MIGRATIONS } from '../../src/ledger/migrations.js';
import { recordAttempt, recordEndWithoutStart, recordStart } from '../../src/ledger/transitions.js';
import { end, launch, ledgerAtSchema, makeJob, start, syncJob, tempLedger } from '../helpers/ledger.js';

test('spreadOf: nothing finished is all nulls; one value is every field', () => {
  assert.deepEqual(spreadOf([]), { min: null, median: null, p95: null, max: null });
  assert.deepEqual(spreadOf([2.5]), { min: 2.5, median: 2.5, p95: 2.5, max: 2.5 });
});

test('spreadOf: median of an even count is the mean of the middle two; p95 is the nearest rank', () => {
  assert.deepEqual(spreadOf([1, 2, 3, 10]), { min: 1, median: 2.5, p95: 10, max: 10 });
  const hundred = Array.from({ length: 100 }, (_, i) => i + 1);
  assert.deepEqual(spreadOf(hundred), { min: 1, median: 50.5, p95: 95, max: 100 });
  const twenty = Array.from({ length: 20 }, (_, i) => i + 1);
  assert.equal(spreadOf(twenty).p95, 19);
});

test('spreadOf: min ≤ median ≤ p95 ≤ max, each one of the values or between two, for any sorted durations', () => {
  fc.assert(
    fc.property(fc.array(fc.double({ min: 0, max: 1e6, noNaN: true }), { minLength: 1 }), (xs) => {
      const d = [...xs].sort((a, b) => a - b);
      const s = spreadOf(d);
      assert.ok(s.min! <= s.median! && s.median! <= s.p95! && s.p95! <= s.max!);
      assert.equal(s.min, d[0]);
      assert.equal(s.max, d.at(-1));
      assert.ok(d.includes(s.p95!));
      // At least 95% of the values are at or below p95, and fewer than 95% below it.
      assert.ok(d.filter((x) => x <= s.p95!).length >= 0.95 * d.length);
      assert.ok(d.filter((x) => x < s.p95!).length < 0.95 * d.length);
    }),
  );
});

/** The spread computed plainly: every current attempt's duration read into memory, rounded, sorted. */
function plainSpread(ledger: Ledger, jobId: number) {
  const d = ledger.db
    .prepare(
      `SELECT round(a.ended_at - a.started_at, 3) AS d FROM attempts a
         JOIN tasks t ON t.job_id = a.job_id AND t.id = a.task_id
         JOIN launch_tasks lt ON lt.launch_id = a.launch_id AND lt.task_id = a.task_id AND lt.revision = t.revision
       WHERE a.job_id = ? AND a.started_at IS NOT NULL AND a.ended_at IS NOT NULL`,
    )
    .pluck()
    .all(jobId) as number[];
  return spreadOf(d.sort((a, b) => a - b));
}

test('jobSpread reads from the index what the durations read into memory give, with and without replaced commands', (t) => {
  const ledger = tempLedger(t);
  let n = 0;
  fc.assert(
    fc.property(
      // Durations in ms (many equal ones: ranks among ties), some attempts without an end or a start.
      fc.array(fc.oneof(fc.integer({ min: 0, max: 50 }), fc.constant(null), fc.constant(-1)), {
        minLength: 0,
        maxLength: 60,
      }),
      fc.array(fc.integer({ min: 0, max: 200 }), { maxLength: 20 }),
      fc.boolean(),
      (durations, rerun, replace) => {
        const name = `j${n++}`;
        const tasks = Math.max(1, durations.length);
        let job = makeJob(ledger, name, tasks);
        const first = launch(
          ledger,
          job,
          Array.from({ length: tasks }, (_, i) => i + 1),
        );
        ledger.write(() => {
          for (const [i, ms] of durations.entries()) {
            const task = i + 1;
            if (ms === null) recordStart(ledger, job.id, first.id, start(task, 1, 1000 + task));
            else if (ms === -1)
              recordEndWithoutStart(ledger, job.id, first.id, end(task, 1, 'failed', 1, 2000));
            else
              recordAttempt(
                ledger,
                job.id,
                first.id,
                start(task, 1, 1000 + task),
                end(task, 1, 'succeeded', 0, 1000 + task + ms / 1000),
              );
          }
        });
        if (replace) {
          // Some tasks get a new command: their attempts so far are history; some run again.
          const changed = new Set(rerun.map((r) => (r % tasks) + 1));
          const entries = new Map(
            Array.from({ length: tasks }, (_, i) => [
              i + 1,
              { command: changed.has(i + 1) ? `echo new ${i + 1}` : `echo ${i + 1}`, tag: '' },
            ]),
          );
          job = syncJob(ledger, name, entries);
          // (A task still running cannot be launched again.)
          const again = [...changed].filter((id) => id % 2 === 0 && durations[id - 1] !== null);
          if (again.length > 0) {
            const second = launch(ledger, job, again);
            ledger.write(() => {
              for (const id of again)
                recordAttempt(
                  ledger,
                  job.id,
                  second.id,
                  start(id, 2, 3000),
                  end(id, 2, 'succeeded', 0, 3000 + id / 7),
                );
            });
          }
        }
        assert.deepEqual(jobSpread(ledger, job.id), plainSpread(ledger, job.id));
      },
    ),
    { numRuns: 60 },
  );
});

test('an attempt whose duration is not its end minus its start is refused (schema 8)', (t) => {
  const ledger = tempLedger(t);
  const job = makeJob(ledger, 'j', 1);
  const l = launch(ledger, job, [1]);
  recordAttempt(ledger, job.id, l.id, start(1, 1, 100), end(1, 1, 'succeeded', 0, 102.5));
  assert.equal(ledger.db.prepare('SELECT duration FROM attempts').pluck().get(), 2.5);
  assert.throws(
    () => ledger.db.prepare('UPDATE attempts SET ended_at = 200').run(),
    /CHECK constraint failed/,
  );
  assert.throws(() => ledger.db.prepare('UPDATE attempts SET duration = 3').run(), /CHECK constraint failed/);
});

test('a ledger of schema 7 keeps every attempt, with its duration now stored', (t) => {
  const { paths, old } = ledgerAtSchema(t, 7);
  old.exec(`INSERT INTO jobs (id, name, created_at, jobfile, task_count, max_task) VALUES (1, 'j', 0, '', 3, 3);
    INSERT INTO launches (id, job_id, backend, tasklist, task_count, created_at, dir, options) VALUES (1, 1, 'local', '1-3', 3, 0, '', '{}');
    INSERT INTO attempts (job_id, task_id, attempt, launch_id, state, started_at, ended_at, host, stdout_off, log_seq)
      VALUES (1, 1, 1, 1, 'succeeded', 10, 12.25, 'h', 7, 3), (1, 2, 1, 1, 'running', 11, NULL, 'h', NULL, NULL),
             (1, 3, 1, 1, 'failed', NULL, 15, NULL, NULL, NULL);`);
  const before = old.prepare('SELECT * FROM attempts ORDER BY task_id').all();
  old.close();

  const ledger = Ledger.open(paths);
  t.after(() => ledger.close());
  assert.equal(ledger.db.pragma('user_version', { simple: true }), MIGRATIONS.length);
  // Every column schema 7 had keeps its values (later migrations add columns of their own).
  const columns = Object.keys(before[0] as object);
  const after = ledger.db.prepare('SELECT * FROM attempts ORDER BY task_id').all() as Record<
    string,
    unknown
  >[];
  assert.deepEqual(
    after.map((r) => Object.fromEntries(columns.map((c) => [c, r[c]]))),
    before,
  );
  assert.deepEqual(ledger.db.prepare('SELECT duration FROM attempts ORDER BY task_id').pluck().all(), [
    2.25,
    null,
    null,
  ]);
  const plan = ledger.db
    .prepare(
      'EXPLAIN QUERY PLAN SELECT count(*) FROM attempts INDEXED BY attempts_duration WHERE job_id = 1 AND duration IS NOT NULL',
    )
    .all() as { detail: string }[];
  assert.match(plan.map((r) => r.detail).join(' '), /COVERING INDEX attempts_duration/);
  assert.deepEqual(jobSpread(ledger, 1), { min: 2.25, median: 2.25, p95: 2.25, max: 2.25 });
});
