import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { type Applied, applyRecords } from '../../src/ledger/apply-records.js';
import type { Ledger } from '../../src/ledger/ledger.js';
import type { Outcome } from '../../src/ledger/transitions/move.js';
import {
  addLaunchTimes,
  recordAttempt,
  recordEnd,
  recordEndWithoutStart,
  recordSkip,
  recordStart,
} from '../../src/ledger/transitions.js';
import type { AttemptRecord, EndRecord, StartRecord } from '../../src/protocol/records.js';
import { latestDrift, launch, makeJob, tempLedger } from '../helpers/ledger.js';

/**
 * applyRecords records the common attempts of a batch many at once (transitions/attempts-batch.ts). It must make
 * exactly what applying every record one by one makes: the reference below is that one-by-one path, written
 * plainly. Random batches of many tasks (so the many-at-once path runs: it takes groups of 16 or more), with
 * retries, skips, records missing, duplicated, out of order, of tasks the launch does not have, and late
 * attempts the legal moves refuse, cut into batches at random; both ledgers must end with the same rows and
 * both calls must say the same (what started, ended and was refused, in order).
 */

/** The one-by-one path: each record as its own transition, a start held back until its end (as applyRecords). */
function referenceApply(
  ledger: Ledger,
  l: { id: number; job_id: number },
  records: AttemptRecord[],
): Applied {
  return ledger.write(() => {
    const out: Applied = { started: [], ended: [], refused: [] };
    const note = (record: AttemptRecord, o: Outcome) => {
      if (o.kind === 'refused') out.refused.push({ record, move: o.move });
      return o;
    };
    const held = new Map<number, StartRecord>();
    const release = (task: number) => {
      const s = held.get(task);
      if (!s) return;
      held.delete(task);
      note(s, recordStart(ledger, l.job_id, l.id, s));
    };
    let first = Number.POSITIVE_INFINITY;
    let last = Number.NEGATIVE_INFINITY;
    let busy = 0;
    for (const r of records) {
      if (r.type === 'start') {
        release(r.task);
        held.set(r.task, r);
        out.started.push({ task: r.task, attempt: r.attempt, at: r.at });
      } else if (r.type === 'end') {
        out.ended.push({ task: r.task, attempt: r.attempt, state: r.state, at: r.at });
        const s = held.get(r.task);
        if (s?.attempt === r.attempt) {
          held.delete(r.task);
          const o = note(r, recordAttempt(ledger, l.job_id, l.id, s, r));
          if (o.kind === 'applied') {
            first = Math.min(first, s.at);
            last = Math.max(last, r.at);
            busy += r.at - s.at;
          } else if (o.kind === 'unchanged') note(r, recordEnd(ledger, l.job_id, l.id, r));
          continue;
        }
        release(r.task);
        const o = note(r, recordEnd(ledger, l.job_id, l.id, r));
        if (o.kind === 'unchanged') note(r, recordEndWithoutStart(ledger, l.job_id, l.id, r));
      } else if (r.type === 'skip') {
        out.ended.push({ task: r.task, attempt: 0, state: 'cancelled', at: r.at });
        release(r.task);
        note(r, recordSkip(ledger, l.job_id, l.id, r));
      } else if (r.type === 'skip-many') {
        // A skip of each of its tasks in turn (not listed among the ended: see Applied).
        for (const [first, last] of r.ranges) {
          for (let task = first; task <= last; task++) {
            release(task);
            note(r, recordSkip(ledger, l.job_id, l.id, { type: 'skip', task, at: r.at, state: 'cancelled' }));
          }
        }
      }
    }
    for (const s of held.values()) note(s, recordStart(ledger, l.job_id, l.id, s));
    if (Number.isFinite(first)) addLaunchTimes(ledger, l.id, first, last, busy);
    return out;
  });
}

/** Every row applying records writes about a job, its launches and its counts. */
function dump(ledger: Ledger, jobId: number): unknown {
  const all = (sql: string) => ledger.db.prepare(sql).all(jobId);
  return {
    tasks: all(
      'SELECT id, state, exit_code, attempts, tries, last_launch_id, latest FROM tasks WHERE job_id = ? ORDER BY id',
    ),
    launchTasks: all(
      `SELECT launch_id, task_id, state FROM launch_tasks WHERE launch_id IN (SELECT id FROM launches WHERE job_id = ?)
       ORDER BY launch_id, task_id`,
    ),
    attempts: all(
      `SELECT task_id, attempt, launch_id, state, exit_code, signal, started_at, ended_at, duration, host, slot, gpus, pid,
         stdout_path, stderr_path, reason, typeof(started_at) AS t1, typeof(exit_code) AS t2
       FROM attempts WHERE job_id = ? ORDER BY task_id, attempt`,
    ),
    launches: all('SELECT id, first_start, last_end, busy FROM launches WHERE job_id = ? ORDER BY id'),
    jobCounts: all('SELECT state, n FROM job_counts WHERE job_id = ? AND n != 0 ORDER BY state'),
    launchCounts: all(
      `SELECT launch_id, state, n FROM launch_counts WHERE n != 0
         AND launch_id IN (SELECT id FROM launches WHERE job_id = ?) ORDER BY launch_id, state`,
    ),
  };
}

const END = fc.oneof(
  { weight: 6, arbitrary: fc.constant('succeeded' as const) },
  {
    weight: 4,
    arbitrary: fc.constantFrom('failed' as const, 'killed' as const, 'timeout' as const, 'lost' as const),
  },
);

/** What one task's records say: its attempts (each maybe retried), or a skip. */
const taskPlan = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({
      ends: fc.oneof(
        { weight: 4, arbitrary: fc.tuple(END) },
        { weight: 1, arbitrary: fc.array(END, { minLength: 2, maxLength: 3 }) },
      ),
      code: fc.constantFrom(0, 1, 2),
    }),
  },
  { weight: 1, arbitrary: fc.constant('skip' as const) },
);

/** How the clean stream is spoiled. */
const spoil = fc.record({
  drop: fc.array(fc.nat(), { maxLength: 4 }),
  dup: fc.array(fc.tuple(fc.nat(), fc.nat()), { maxLength: 4 }),
  swap: fc.array(fc.nat(), { maxLength: 4 }),
  strangers: fc.array(fc.integer({ min: 1, max: 3 }), { maxLength: 3 }),
  late: fc.array(fc.nat(), { maxLength: 3 }),
  cuts: fc.array(fc.nat(), { maxLength: 3 }),
  rerun: fc.boolean(),
  lateAll: fc.boolean(),
  // The late attempts' batch opens with a skip-many of every task: each is cancelled before its late attempt.
  lateSkipped: fc.boolean(),
  // skip-many records anywhere, naming any tasks (ran, running, skipped, strangers), ranges overlapping or not.
  many: fc.array(
    fc.record({
      at: fc.nat(),
      ranges: fc.array(fc.tuple(fc.integer({ min: 1, max: 90 }), fc.nat({ max: 25 })), {
        minLength: 1,
        maxLength: 4,
      }),
    }),
    { maxLength: 3 },
  ),
  // Tasks the launch holds as not in it yet (pending): every move of theirs is refused, skips too.
  pendingRows: fc.array(fc.nat(), { maxLength: 3 }),
});

function startRec(task: number, attempt: number, at: number): StartRecord {
  return {
    type: 'start',
    task,
    attempt,
    at,
    pid: 5000 + task,
    slot: task % 3,
    gpus: task % 4 === 0 ? '0,1' : null,
    host: task % 5 === 0 ? 'hôte-b' : 'h',
    out: `/l/${task}.${attempt}.out`,
    err: `/l/${task}.${attempt}.err`,
  };
}

function failedEnd(task: number, attempt: number): EndRecord {
  return { type: 'end', task, attempt, at: 0, state: 'failed', exit_code: 1, signal: null };
}

function streamOf(
  plans: (typeof taskPlan extends fc.Arbitrary<infer T> ? T : never)[],
  first: number,
): AttemptRecord[][] {
  return plans.map((p, i) => {
    const task = i + 1;
    if (p === 'skip') return [{ type: 'skip', task, at: 0, state: 'cancelled' }];
    return p.ends.flatMap((state, k) => {
      const e: EndRecord = {
        type: 'end',
        task,
        attempt: first + k,
        at: 0,
        state,
        exit_code: state === 'succeeded' ? 0 : state === 'failed' ? p.code || 1 : null,
        signal: state === 'killed' ? 'SIGTERM' : null,
      };
      if (k < p.ends.length - 1) e.retry = true;
      if (state === 'lost') e.reason = 'its node died';
      return [startRec(task, first + k, 0), e];
    });
  });
}

test('many attempts at once make exactly what applying the records one by one makes', async (t) => {
  const fast = tempLedger(t);
  const ref = tempLedger(t);
  let runs = 0;
  let manyRuns = 0;
  await fc.assert(
    fc.property(
      fc.array(taskPlan, { minLength: 30, maxLength: 80 }),
      fc.array(fc.nat(), { minLength: 200, maxLength: 200 }),
      spoil,
      (plans, mix, s) => {
        const name = `J${++runs}`;
        const n = plans.length;
        const ids = plans.map((_, i) => i + 1);
        // The clean stream: each task's records in order, tasks interleaved at random.
        const perTask = streamOf(plans, 1);
        let records: AttemptRecord[] = [];
        let k = 0;
        while (perTask.some((rs) => rs.length > 0)) {
          const open = perTask.filter((rs) => rs.length > 0);
          records.push(open[mix[k++ % mix.length]! % open.length]!.shift()!);
        }
        // Spoil it.
        for (const d of s.drop) records.splice(d % records.length, 1);
        for (const [from, to] of s.dup) {
          if (records.length === 0) break;
          records.splice(to % (records.length + 1), 0, records[from % records.length]!);
        }
        for (const w of s.swap) {
          if (records.length < 2) break;
          const i = w % (records.length - 1);
          [records[i], records[i + 1]] = [records[i + 1]!, records[i]!];
        }
        for (const x of s.strangers)
          records.push(startRec(n + x, 1, 0), {
            ...(streamOf([{ ends: ['succeeded'], code: 0 }], 1)[0]![1] as EndRecord),
            task: n + x,
          });
        for (const x of s.late) {
          const task = (x % n) + 1;
          records.push(startRec(task, 9, 0), failedEnd(task, 9));
        }
        for (const m of s.many) {
          const ranges = m.ranges.map(([a, len]): [number, number] => [a, a + len]);
          records.splice(m.at % (records.length + 1), 0, {
            type: 'skip-many',
            ranges,
            at: 0,
            state: 'cancelled',
          });
        }
        records = records.map((r, i) => ({ ...r, at: 1_700_000_000 + i * 0.37 + (i % 7) * 0.001 }));
        const bounds = [...new Set(s.cuts.map((c) => c % (records.length + 1)))].sort((a, b) => a - b);
        const batches: AttemptRecord[][] = [];
        let from = 0;
        for (const b of [...bounds, records.length]) {
          batches.push(records.slice(from, b));
          from = b;
        }

        const world = [fast, ref].map((ledger) => {
          const job = makeJob(ledger, name, n + 3);
          const l = launch(ledger, job, ids);
          for (const p of s.pendingRows) {
            ledger.db
              .prepare("UPDATE launch_tasks SET state = 'pending' WHERE launch_id = ? AND task_id = ?")
              .run(l.id, (p % n) + 1);
          }
          return { ledger, job, l };
        });
        if (s.lateAll) {
          // Late attempts of every task, the launch's and three it does not have, in a batch of their own:
          // refused where the task succeeded or is not in the launch, recorded elsewhere.
          const late: AttemptRecord[] = Array.from({ length: n + 3 }, (_, i) => [
            startRec(i + 1, 9, 2_000_000_000 + i),
            { ...failedEnd(i + 1, 9), at: 2_000_000_000 + i + 0.25 },
          ]).flat();
          if (s.lateSkipped)
            late.unshift({ type: 'skip-many', ranges: [[1, n + 3]], at: 1_999_999_999, state: 'cancelled' });
          batches.push(late);
        }
        if (batches.some(manyAlike)) manyRuns++;
        for (const [i, b] of batches.entries()) {
          const got = applyRecords(fast, world[0]!.l, b);
          const want = referenceApply(ref, world[1]!.l, b);
          assert.deepEqual(got, want, `batch ${i}`);
        }
        assert.deepEqual(dump(fast, world[0]!.job.id), dump(ref, world[1]!.job.id));
        if (s.rerun) {
          // A rerun of the tasks that ended, and its records, then the first launch's records again (a replay).
          const ended = (
            fast.db
              .prepare(
                "SELECT id FROM tasks WHERE job_id = ? AND id <= ? AND state NOT IN ('queued', 'running')",
              )
              .pluck()
              .all(world[0]!.job.id, n) as number[]
          ).filter((id) => plans[id - 1] !== 'skip');
          if (ended.length === 0) return;
          const again = streamOf(plans, 10)
            .filter((_, i) => ended.includes(i + 1))
            .flat()
            .map((r, i) => ({ ...r, at: 1_800_000_000 + i * 0.5 }));
          if (manyAlike(again)) manyRuns++;
          const [l2, r2] = world.map((w) => launch(w.ledger, w.job, ended));
          assert.deepEqual(applyRecords(fast, l2!, again), referenceApply(ref, r2!, again), 'rerun');
          assert.deepEqual(
            applyRecords(fast, world[0]!.l, records),
            referenceApply(ref, world[1]!.l, records),
            'replay',
          );
          // Late attempts of the first launch, new to the ledger, of tasks whose newest launch is the rerun:
          // they move in the first launch only.
          const late = Array.from({ length: n }, (_, i) => [
            startRec(i + 1, 20, 2_100_000_000 + i),
            { ...failedEnd(i + 1, 20), at: 2_100_000_000 + i + 0.5 },
          ]).flat();
          assert.deepEqual(
            applyRecords(fast, world[0]!.l, late),
            referenceApply(ref, world[1]!.l, late),
            'late records of the first launch',
          );
        }
        assert.deepEqual(dump(fast, world[0]!.job.id), dump(ref, world[1]!.job.id));
        assert.deepEqual(latestDrift(fast, world[0]!.job.id), []);
      },
    ),
    { numRuns: 150, includeErrorInReport: true },
  );
  assert.ok(manyRuns >= 50, `only ${manyRuns} of 150 runs had a batch of 16 alike attempts`);
});

/** True when a batch holds 16 tasks whose only records are one start and its end with the same outcome. */
function manyAlike(batch: AttemptRecord[]): boolean {
  const byTask = new Map<number, AttemptRecord[]>();
  for (const r of batch) if ('task' in r) byTask.set(r.task, [...(byTask.get(r.task) ?? []), r]);
  const alike = new Map<string, number>();
  for (const rs of byTask.values()) {
    const [s, e] = rs;
    if (rs.length !== 2 || s?.type !== 'start' || e?.type !== 'end' || s.attempt !== e.attempt) continue;
    const key = `${e.retry ? 'queued' : e.state} ${e.attempt} ${e.exit_code}`;
    alike.set(key, (alike.get(key) ?? 0) + 1);
  }
  return [...alike.values()].some((c) => c >= 16);
}
