// Each task keeps its latest attempt's start, end, duration and host (tasks.latest, schema 9) for `list --json`.
// Whatever mix of transitions a ledger goes through — attempts starting, ending, ending without a start, retried,
// refused, skipped, lost, in error, restated; launches made and undone; commands replaced, tasks removed and
// added again — the kept members must be exactly what the latest attempt join gives (src/ledger/latest-attempt.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { applyRecords } from '../../src/ledger/apply-records.js';
import type { LaunchRow } from '../../src/ledger/launches.js';
import { Ledger } from '../../src/ledger/ledger.js';
import { MIGRATIONS } from '../../src/ledger/migrations.js';
import {
  deleteLaunch,
  markUnfinished,
  recordEnd,
  recordEndWithoutStart,
  recordError,
  recordSkip,
  recordSkips,
  recordStart,
  restateEnd,
} from '../../src/ledger/transitions.js';
import type { AttemptRecord } from '../../src/protocol/records.js';
import {
  end,
  latestDrift,
  launch,
  ledgerAtSchema,
  makeJob,
  start,
  syncJob,
  tempLedger,
} from '../helpers/ledger.js';

const TASKS = 20;
const task = fc.integer({ min: 1, max: TASKS });
const attempt = fc.integer({ min: 1, max: 6 });
const at = fc.integer({ min: 0, max: 10_000 }).map((n) => 1_700_000_000 + n / 8);
const endState = fc.constantFrom(
  'succeeded',
  'failed',
  'killed',
  'timeout',
  'lost',
  'cancelled',
) as fc.Arbitrary<'succeeded' | 'failed' | 'killed' | 'timeout' | 'lost' | 'cancelled'>;

/** One thing that happens to the ledger; `l` picks one of the launches made so far (the newest: 0). */
const op = fc.oneof(
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('launch' as const),
      ids: fc.uniqueArray(task, { minLength: 1, maxLength: TASKS }),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({ kind: fc.constant('start' as const), l: fc.nat(3), task, attempt, at }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('end' as const),
      l: fc.nat(3),
      task,
      attempt,
      at,
      state: endState,
      retry: fc.boolean(),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('endOnly' as const),
      l: fc.nat(3),
      task,
      attempt,
      at,
      state: endState,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('batch' as const),
      l: fc.nat(3),
      first: task,
      attempt,
      at,
      state: endState,
      count: fc.integer({ min: 16, max: TASKS }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('skip' as const), l: fc.nat(3), task, many: fc.boolean() }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('lost' as const), l: fc.nat(3) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('error' as const), l: fc.nat(3), task }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('restate' as const), l: fc.nat(3), task, attempt }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('undo' as const), l: fc.nat(3) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('sync' as const),
      change: fc.uniqueArray(task, { maxLength: 6 }),
      drop: fc.uniqueArray(task, { maxLength: 3 }),
    }),
  },
);

test('the latest attempt kept on each task is what the join gives, after any mix of transitions', (t) => {
  const ledger = tempLedger(t);
  let n = 0;
  fc.assert(
    fc.property(fc.array(op, { minLength: 1, maxLength: 40 }), (ops) => {
      const name = `j${n++}`;
      let job = makeJob(ledger, name, TASKS);
      const launches: LaunchRow[] = [];
      let generation = 0;
      const pick = (l: number) => launches[launches.length - 1 - (l % Math.max(1, launches.length))];
      for (const o of ops) {
        const l = 'l' in o ? pick(o.l) : undefined;
        if (o.kind !== 'launch' && o.kind !== 'sync' && !l) continue;
        switch (o.kind) {
          case 'launch':
            try {
              launches.push(launch(ledger, job, o.ids));
            } catch {
              // Some of them are queued or running: refused, nothing written.
            }
            break;
          case 'start':
            recordStart(ledger, job.id, l!.id, start(o.task, o.attempt, o.at));
            break;
          case 'end':
            recordEnd(ledger, job.id, l!.id, {
              ...end(o.task, o.attempt, o.state, o.state === 'succeeded' ? 0 : null, o.at + 3),
              ...(o.retry ? { retry: true } : {}),
            });
            break;
          case 'endOnly':
            recordEndWithoutStart(ledger, job.id, l!.id, end(o.task, o.attempt, o.state, 1, o.at));
            break;
          case 'batch': {
            // Whole attempts of many tasks at once (the many-at-once path of applyRecords).
            const records: AttemptRecord[] = [];
            for (let k = 0; k < o.count; k++) {
              const id = ((o.first + k - 1) % TASKS) + 1;
              records.push(start(id, o.attempt, o.at + k), end(id, o.attempt, o.state, 0, o.at + k + 0.125));
            }
            applyRecords(ledger, l!, records);
            break;
          }
          case 'skip':
            if (o.many) recordSkips(ledger, job.id, l!.id, 1, o.task);
            else recordSkip(ledger, job.id, l!.id, { type: 'skip', task: o.task, at: 0, state: 'cancelled' });
            break;
          case 'lost':
            markUnfinished(ledger, job.id, l!.id, 'all', 'lost', 'its runner died');
            break;
          case 'error':
            recordError(ledger, job.id, l!.id, o.task, 'Eqw');
            break;
          case 'restate':
            restateEnd(ledger, job.id, l!.id, o.task, o.attempt, 'killed', 'timeout', 'time limit');
            break;
          case 'undo':
            // Only a launch that never reached its backend is undone; one with attempts is refused (their rows
            // reference it), and nothing is written.
            try {
              deleteLaunch(ledger, l!.id);
              launches.splice(launches.indexOf(l!), 1);
            } catch {}
            break;
          case 'sync': {
            generation++;
            const entries = new Map<number, { command: string; tag: string }>();
            for (let id = 1; id <= TASKS; id++) {
              if (o.drop.includes(id)) continue;
              entries.set(id, {
                command: o.change.includes(id) ? `echo ${id} v${generation}` : `echo ${id}`,
                tag: '',
              });
            }
            job = syncJob(ledger, name, entries);
            break;
          }
        }
        assert.deepEqual(latestDrift(ledger, job.id), [], `after ${JSON.stringify(o)}`);
      }
    }),
    { numRuns: 200 },
  );
});

test('a ledger of schema 8 gets each task its latest attempt as the join gives it', (t) => {
  const { paths, old } = ledgerAtSchema(t, 8);
  // Task 1: two launches, the newest's attempt 3 is its latest; 2: its latest attempt belongs to an older launch
  // (none shows); 3: never launched; 4: an attempt with an unknown start and a host with a quote in its name.
  old.exec(`INSERT INTO jobs (id, name, created_at, jobfile, task_count, max_task) VALUES (1, 'j', 0, '', 4, 4);
    INSERT INTO launches (id, job_id, backend, tasklist, task_count, created_at, dir, options)
      VALUES (1, 1, 'local', '1-4', 4, 0, '', '{}'), (2, 1, 'local', '1-2', 2, 0, '', '{}');
    INSERT INTO tasks (job_id, id, command, tag, state, attempts, last_launch_id) VALUES
      (1, 1, 'a', '', 'succeeded', 3, 2), (1, 2, 'b', '', 'queued', 1, 2), (1, 3, 'c', '', 'pending', 0, NULL),
      (1, 4, 'd', '', 'failed', 1, 1);
    INSERT INTO attempts (job_id, task_id, attempt, launch_id, state, started_at, ended_at, duration, host) VALUES
      (1, 1, 1, 1, 'failed', 10, 11, 1, 'h'), (1, 1, 3, 2, 'succeeded', 20.5, 22.75, 2.25, 'h2'),
      (1, 2, 1, 1, 'failed', 10, 12, 2, 'h'), (1, 4, 1, 1, 'failed', NULL, 30, NULL, 'say "hi"');`);
  old.close();

  const ledger = Ledger.open(paths);
  t.after(() => ledger.close());
  assert.equal(ledger.db.pragma('user_version', { simple: true }), MIGRATIONS.length);
  assert.deepEqual(latestDrift(ledger, 1), []);
  assert.deepEqual(ledger.db.prepare('SELECT latest FROM tasks ORDER BY id').pluck().all(), [
    '"started_at":20.5,"ended_at":22.75,"duration_s":2.25,"host":"h2"',
    null,
    null,
    '"started_at":null,"ended_at":30.0,"duration_s":null,"host":"say \\"hi\\""',
  ]);
});
