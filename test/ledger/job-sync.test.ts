// A job's identity (docs/concepts.md invariant 1): random mixes of jobfile rewrites, launches and attempt records against a
// real ledger file, checked after every step against a model of what each task's state must be.
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import { syncJobTasks } from '../../src/ledger/job-sync.js';
import { jobTaskIds } from '../../src/ledger/jobs.js';
import { launchTasks } from '../../src/ledger/launches.js';
import type { Ledger } from '../../src/ledger/ledger.js';
import { jobAttempts, jobCounts } from '../../src/ledger/queries.js';
import {
  closeLaunchIfDone,
  createLaunch,
  markUnfinished,
  recordAttempt,
  recordEnd,
  recordEndWithoutStart,
  recordStart,
} from '../../src/ledger/transitions.js';
import { STATES, type State, type TerminalState } from '../../src/protocol/states.js';
import { end, start, tempLedger } from '../helpers/ledger.js';

type Op =
  | { kind: 'sync'; entries: [number, string][] }
  | { kind: 'launch'; pick: number[] }
  | { kind: 'start'; pick: number }
  | { kind: 'end'; pick: number; state: TerminalState; withStart: boolean }
  | { kind: 'lost'; pick: number };

/** What the model knows of one launch's task. */
interface ModelRun {
  launch: number;
  task: number;
  attempt: number;
  /** The model revision of the task the launch ran. */
  rev: number;
  state: State;
}

interface ModelTask {
  command: string;
  rev: number;
  /** The run of its current command's newest launch, if any. */
  run: ModelRun | undefined;
  tries: number;
}

const ENDS: TerminalState[] = ['succeeded', 'failed', 'killed', 'timeout', 'cancelled', 'lost', 'error'];

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 2,
    arbitrary: fc
      .uniqueArray(fc.tuple(fc.integer({ min: 1, max: 7 }), fc.constantFrom('a', 'b', 'c')), {
        selector: ([id]) => id,
        maxLength: 7,
      })
      .map((entries) => ({ kind: 'sync' as const, entries })),
  },
  {
    weight: 2,
    arbitrary: fc
      .uniqueArray(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 7 })
      .map((pick) => ({ kind: 'launch' as const, pick })),
  },
  { weight: 3, arbitrary: fc.nat().map((pick) => ({ kind: 'start' as const, pick })) },
  {
    weight: 3,
    arbitrary: fc
      .tuple(fc.nat(), fc.constantFrom(...ENDS), fc.boolean())
      .map(([pick, state, withStart]) => ({ kind: 'end' as const, pick, state, withStart })),
  },
  { weight: 1, arbitrary: fc.nat().map((pick) => ({ kind: 'lost' as const, pick })) },
);

function check(ledger: Ledger, jobId: number, model: Map<number, ModelTask>): void {
  const rows = ledger
    .stmt('SELECT id, command, state, tries FROM tasks WHERE job_id = ? ORDER BY id')
    .all(jobId) as { id: number; command: string; state: State; tries: number }[];
  const expected = [...model.entries()]
    .sort(([a], [b]) => a - b)
    .map(([id, m]) => ({ id, command: m.command, state: m.run?.state ?? 'pending', tries: m.tries }));
  assert.deepEqual(rows, expected);
  const counts = jobCounts(ledger, jobId);
  const want = Object.fromEntries(STATES.map((s) => [s, expected.filter((e) => e.state === s).length]));
  assert.deepEqual(counts, want);
  const total = STATES.reduce((n, s) => n + counts[s], 0);
  const job = ledger.stmt('SELECT task_count, max_task FROM jobs WHERE id = ?').get(jobId) as {
    task_count: number;
    max_task: number;
  };
  assert.equal(total, job.task_count, 'counts add up to the task count, never more');
  assert.equal(job.max_task, Math.max(0, ...model.keys()));
  assert.deepEqual(
    jobTaskIds(ledger, jobId),
    [...model.keys()].sort((a, b) => a - b),
  );
  // Attempts of a task's current command are exactly those that count; the rest is history.
  for (const a of jobAttempts(ledger, jobId)) {
    const m = model.get(a.task);
    if (a.current) assert.ok(m, `attempt ${a.task}.${a.attempt} counts for a task the job no longer has`);
  }
}

test('random jobfile rewrites, launches and records: a task state always belongs to its current command', (t) => {
  fc.assert(
    fc.property(fc.array(opArb, { minLength: 1, maxLength: 40 }), (ops) => {
      const ledger = tempLedger({ after: (fn) => t.after(fn) });
      const jobfile = path.join(ledger.paths.root, 'jobs', 'J', 'jobs.json');
      const model = new Map<number, ModelTask>();
      const runs: ModelRun[] = [];
      let rev = 0;
      let nextAttempt = new Map<number, number>();
      let jobId = syncJobTasks(ledger, 'J', jobfile, new Map(), null).job.id;
      const open = () => runs.filter((r) => r.state === 'queued' || r.state === 'running');
      for (const op of ops) {
        if (op.kind === 'sync') {
          const entries = new Map(op.entries.map(([id, c]) => [id, { command: `${c} ${id}`, tag: '' }]));
          jobId = syncJobTasks(ledger, 'J', jobfile, entries, null).job.id;
          for (const id of [...model.keys()]) if (!entries.has(id)) model.delete(id);
          for (const [id, e] of entries) {
            const m = model.get(id);
            if (m && m.command === e.command) continue;
            model.set(id, { command: e.command, rev: ++rev, run: undefined, tries: 0 });
          }
        } else if (op.kind === 'launch') {
          const ids = op.pick.filter((id) => model.has(id)).sort((a, b) => a - b);
          if (ids.length === 0) continue;
          const busy = open().some((r) => ids.includes(r.task));
          const job = ledger.stmt('SELECT * FROM jobs WHERE id = ?').get(jobId) as Parameters<
            typeof createLaunch
          >[1];
          if (busy) {
            assert.throws(
              () => createLaunch(ledger, job, 'local', ids, {}, (l) => `/nonexistent/${l}`),
              /already queued or running/,
              'no launch of a task while an attempt of it (of any command) is queued or running',
            );
            continue;
          }
          const made = createLaunch(ledger, job, 'local', ids, {}, (l) => `/nonexistent/${l}`);
          for (const task of launchTasks(ledger, job.id, made.ids)) {
            const m = model.get(task.id)!;
            const run: ModelRun = {
              launch: made.launch.id,
              task: task.id,
              attempt: task.attempt,
              rev: m.rev,
              state: 'queued',
            };
            assert.ok(task.attempt > (nextAttempt.get(task.id) ?? 0), 'attempt numbers only grow');
            runs.push(run);
            m.run = run;
          }
        } else if (op.kind === 'start') {
          const queued = runs.filter((r) => r.state === 'queued');
          const run = queued[op.pick % Math.max(1, queued.length)];
          if (!run) continue;
          ledger.write(() => recordStart(ledger, jobId, run.launch, start(run.task, run.attempt)));
          run.state = 'running';
          nextAttempt.set(run.task, run.attempt);
          const m = model.get(run.task);
          if (m?.run === run) m.tries += 1;
        } else if (op.kind === 'end') {
          const live = op.withStart ? runs.filter((r) => r.state === 'queued') : open();
          const run = live[op.pick % Math.max(1, live.length)];
          if (!run) continue;
          // An end whose start line was lost (a damaged record file) still makes an attempt.
          const startless = !op.withStart && run.state === 'queued';
          const e = end(run.task, run.attempt, op.state, op.state === 'failed' ? 3 : null);
          ledger.write(() => {
            if (op.withStart) recordAttempt(ledger, jobId, run.launch, start(run.task, run.attempt), e);
            else if (startless) recordEndWithoutStart(ledger, jobId, run.launch, e);
            else recordEnd(ledger, jobId, run.launch, e);
            closeLaunchIfDone(ledger, run.launch);
          });
          const m = model.get(run.task);
          if ((op.withStart || startless) && m?.run === run) m.tries += 1;
          nextAttempt.set(run.task, run.attempt);
          run.state = op.state;
        } else {
          const live = open();
          const run = live[op.pick % Math.max(1, live.length)];
          if (!run) continue;
          ledger.write(() => markUnfinished(ledger, jobId, run.launch, [run.task], 'lost', 'runner gone'));
          run.state = 'lost';
        }
        check(ledger, jobId, model);
      }
      nextAttempt = new Map();
    }),
    { numRuns: 150 },
  );
});
