// The one owner of state changes: random sequences of every transition, with random (often illegal) arguments,
// on a real ledger file. After every step: each task's move in each launch is one the table of legal moves allows,
// a refused transition changed nothing at all, and the counts per state are the tasks' latest states and never
// exceed the job's task count (docs/concepts.md, "The record's invariants").
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import { syncJobTasks } from '../../src/ledger/job-sync.js';
import { refuseActive } from '../../src/ledger/launches.js';
import type { Ledger } from '../../src/ledger/ledger.js';
import { isLegalMove, MOVES } from '../../src/ledger/moves.js';
import {
  assignTask,
  cancelPoolTasks,
  closeLaunchIfDone,
  createLaunch,
  expandAll,
  finishTask,
  markLost,
  markUnfinished,
  type Outcome,
  recordAttempt,
  recordEnd,
  recordEndWithoutStart,
  recordError,
  recordSkip,
  recordStart,
  requeueForRetry,
  restateEnd,
  unassign,
} from '../../src/ledger/transitions.js';
import { STATES, type State, TERMINAL_STATES, type TerminalState } from '../../src/protocol/states.js';
import { end, latestDrift, start, tempLedger } from '../helpers/ledger.js';

const TASKS = 4;
const task = fc.integer({ min: 1, max: TASKS });
/** An attempt number relative to the task's newest: the one before, that one, or the next. */
const attempt = fc.integer({ min: -1, max: 1 });
/** Which launch, counted from the newest (mostly the newest). */
const launchPick = fc.oneof(
  { weight: 4, arbitrary: fc.constant(0) },
  { weight: 1, arbitrary: fc.nat({ max: 3 }) },
);
const terminal = fc.constantFrom(...TERMINAL_STATES);

/** One step: a transition and its arguments (a launch is picked among those made so far). */
type Op =
  | { kind: 'sync'; commands: ('a' | 'b')[] }
  | { kind: 'launch'; ids: number[]; pool: boolean }
  | { kind: 'start' | 'endWithoutStart'; l: number; task: number; attempt: number; state: TerminalState }
  | {
      kind: 'end' | 'attempt';
      l: number;
      task: number;
      attempt: number;
      state: TerminalState;
      retry: boolean;
      aim: boolean;
    }
  | { kind: 'skip' | 'error' | 'assign' | 'unassign' | 'finish' | 'lost'; l: number; task: number }
  | { kind: 'unfinished'; l: number; ids: number[] | 'all'; state: TerminalState }
  | {
      kind: 'restate';
      l: number;
      task: number;
      attempt: number;
      from: TerminalState;
      to: TerminalState;
      aim: boolean;
    }
  | { kind: 'requeue'; l: number; task: number; attempt: number }
  | { kind: 'cancel'; l: number; ids: number[] | 'all' }
  | { kind: 'close'; l: number };

const ids = fc.uniqueArray(task, { minLength: 1, maxLength: TASKS });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('sync' as const),
      commands: fc.array(fc.constantFrom('a' as const, 'b' as const), { minLength: TASKS, maxLength: TASKS }),
    }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('launch' as const), ids, pool: fc.boolean() }) },
  ...(['start', 'endWithoutStart'] as const).map((kind) => ({
    weight: 4,
    arbitrary: fc.record({ kind: fc.constant(kind), l: launchPick, task, attempt, state: terminal }),
  })),
  ...(['end', 'attempt'] as const).map((kind) => ({
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant(kind),
      l: launchPick,
      task,
      attempt,
      state: terminal,
      retry: fc.boolean(),
      aim: fc.oneof(
        { weight: 4, arbitrary: fc.constant(true) },
        { weight: 1, arbitrary: fc.constant(false) },
      ),
    }),
  })),
  ...(['skip', 'error', 'assign', 'unassign', 'finish', 'lost'] as const).map((kind) => ({
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant(kind), l: launchPick, task }),
  })),
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('unfinished' as const),
      l: launchPick,
      ids: fc.oneof(ids, fc.constant('all' as const)),
      state: terminal,
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('restate' as const),
      l: launchPick,
      task,
      attempt,
      from: terminal,
      to: terminal,
      aim: fc.oneof(
        { weight: 4, arbitrary: fc.constant(true) },
        { weight: 1, arbitrary: fc.constant(false) },
      ),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('requeue' as const), l: launchPick, task, attempt }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('cancel' as const),
      l: launchPick,
      ids: fc.oneof(ids, fc.constant('all' as const)),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('close' as const), l: launchPick }) },
);

/** Every row a transition may touch, for "a refused transition changed nothing". */
function dump(ledger: Ledger): string {
  const all = (sql: string) => ledger.db.prepare(sql).all();
  return JSON.stringify([
    all('SELECT * FROM tasks ORDER BY job_id, id'),
    all('SELECT * FROM launch_tasks ORDER BY launch_id, task_id'),
    all('SELECT * FROM attempts ORDER BY job_id, task_id, attempt'),
    all('SELECT * FROM pool_tasks ORDER BY launch_id, task_id'),
    all('SELECT id, open, first_start, last_end, busy FROM launches ORDER BY id'),
  ]);
}

/** The state of every task in every launch: `launch:task` → state. */
function launchStates(ledger: Ledger): Map<string, State> {
  const rows = ledger.db.prepare('SELECT launch_id, task_id, state FROM launch_tasks').all() as {
    launch_id: number;
    task_id: number;
    state: State;
  }[];
  return new Map(rows.map((r) => [`${r.launch_id}:${r.task_id}`, r.state]));
}

/** The record's invariants, checked against the tables themselves. */
function checkInvariants(ledger: Ledger, jobId: number): void {
  const db = ledger.db;
  const tasks = db.prepare('SELECT id, state, last_launch_id FROM tasks WHERE job_id = ?').all(jobId) as {
    id: number;
    state: State;
    last_launch_id: number | null;
  }[];
  for (const t of tasks) {
    const inLaunch =
      t.last_launch_id === null
        ? 'pending'
        : (
            db
              .prepare('SELECT state FROM launch_tasks WHERE launch_id = ? AND task_id = ?')
              .get(t.last_launch_id, t.id) as { state: State } | undefined
          )?.state;
    assert.equal(t.state, inLaunch, `task ${t.id}: its state is its state in its newest launch`);
  }
  const counts = Object.fromEntries(
    (
      db.prepare('SELECT state, n FROM job_counts WHERE job_id = ? AND n != 0').all(jobId) as {
        state: State;
        n: number;
      }[]
    ).map((r) => [r.state, r.n]),
  );
  const latest: Record<string, number> = {};
  for (const t of tasks) latest[t.state] = (latest[t.state] ?? 0) + 1;
  assert.deepEqual(counts, latest, "the counts per state are the tasks' latest states");
  const job = db.prepare('SELECT task_count FROM jobs WHERE id = ?').get(jobId) as { task_count: number };
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  assert.equal(total, job.task_count, 'the counts add up to the task count, never more');
  const byLaunch = db
    .prepare(
      `SELECT c.launch_id, c.state, c.n, (SELECT count(*) FROM launch_tasks lt WHERE lt.launch_id = c.launch_id
         AND lt.state = c.state) AS real FROM launch_counts c`,
    )
    .all() as { n: number; real: number }[];
  for (const c of byLaunch) assert.equal(c.n, c.real, 'launch counts are its tasks by state');
  assert.deepEqual(latestDrift(ledger, jobId), [], "each task keeps its latest attempt's members");
}

/** Make a pool launch of `taskIds` (the rows launch-create.ts makes), with all its task rows. */
function poolLaunch(ledger: Ledger, jobId: number, taskIds: number[]): number {
  const list = [...taskIds].sort((a, b) => a - b).join(',');
  const id = Number(
    ledger.db
      .prepare(
        "INSERT INTO launches (job_id, backend, tasklist, task_count, created_at, dir, options) VALUES (?, 'pool:p', ?, ?, 0, '', '{}')",
      )
      .run(jobId, list, taskIds.length).lastInsertRowid,
  );
  ledger.db
    .prepare(
      "INSERT INTO pool_launches (launch_id, pool, tasklist, total, settings) VALUES (?, 'p', ?, ?, '{}')",
    )
    .run(id, list, taskIds.length);
  expandAll(ledger, id);
  return id;
}

test('random transitions on a real ledger: every move is legal, a refusal changes nothing, counts hold', (t) => {
  const seen = { refused: 0, applied: new Set<string>(), moves: new Set<string>() };
  fc.assert(
    fc.property(fc.array(opArb, { minLength: 5, maxLength: 60, size: 'max' }), (ops) => {
      const ledger = tempLedger({ after: (fn) => t.after(fn) });
      const jobfile = path.join(ledger.paths.root, 'jobs', 'J', 'jobs.json');
      const sync = (commands: string[]) =>
        syncJobTasks(
          ledger,
          'J',
          jobfile,
          new Map(commands.map((c, i) => [i + 1, { command: `${c} ${i + 1}`, tag: '' }])),
          null,
        ).job;
      let job = sync(Array(TASKS).fill('a'));
      const launches: { id: number; job_id: number; pool: boolean }[] = [];
      for (const op of ops) {
        const before = launchStates(ledger);
        const rows = dump(ledger);
        const l =
          'l' in op ? launches[launches.length - 1 - (op.l % Math.max(1, launches.length))] : undefined;
        let outcome: Outcome | undefined;
        if (op.kind === 'sync') job = sync(op.commands);
        else if (op.kind === 'launch') {
          try {
            const ids = op.ids.filter((id) => id <= job.task_count);
            if (op.pool) {
              ledger.write(() => {
                refuseActive(ledger, job, ids);
                launches.push({ id: poolLaunch(ledger, job.id, ids), job_id: job.id, pool: true });
              });
            } else {
              const made = createLaunch(ledger, job, 'local', ids, {}, (id) => `/nonexistent/${id}`);
              launches.push({ id: made.launch.id, job_id: job.id, pool: false });
            }
          } catch (err) {
            assert.match(String(err), /already queued or running/);
          }
        } else if (l) {
          // The attempt an op means: relative to the task's newest (so starts and ends meet).
          const n =
            'attempt' in op
              ? Math.max(
                  1,
                  (
                    ledger.db
                      .prepare(
                        'SELECT coalesce(max(attempt), 0) AS n FROM attempts WHERE job_id = ? AND task_id = ?',
                      )
                      .get(job.id, op.task) as { n: number }
                  ).n + op.attempt,
                )
              : 0;
          const e = (o: { task: number; attempt: number; state: TerminalState; retry?: boolean }) => ({
            ...end(o.task, o.attempt, o.state, o.state === 'failed' ? 1 : null, 200 + o.attempt),
            ...(o.retry ? { retry: true } : {}),
          });
          // Aimed arguments, so each transition also meets what it acts on: a task some worker holds, the
          // state an attempt is in.
          const pooled = ledger.db
            .prepare('SELECT task_id FROM pool_tasks WHERE launch_id = ? ORDER BY task_id')
            .pluck()
            .all(l.id) as number[];
          const heldTask =
            (op.kind === 'unassign' || op.kind === 'finish') && pooled.length > 0
              ? pooled[op.task % pooled.length]!
              : 'task' in op
                ? op.task
                : 0;
          const newestHere = ledger.db
            .prepare(
              'SELECT attempt, state FROM attempts WHERE launch_id = ? AND task_id = ? ORDER BY attempt DESC LIMIT 1',
            )
            .get(l.id, heldTask) as { attempt: number; state: State } | undefined;
          switch (op.kind) {
            case 'start':
              outcome = recordStart(ledger, job.id, l.id, start(op.task, n, 100 + n));
              break;
            case 'end':
              // Aimed: the attempt of this task open in this launch, if one is.
              outcome = recordEnd(
                ledger,
                job.id,
                l.id,
                e({ ...op, attempt: op.aim && newestHere?.state === 'running' ? newestHere.attempt : n }),
              );
              break;
            case 'endWithoutStart':
              outcome = recordEndWithoutStart(ledger, job.id, l.id, e({ ...op, attempt: n }));
              break;
            case 'attempt':
              outcome = recordAttempt(
                ledger,
                job.id,
                l.id,
                start(op.task, n, 100 + n),
                e({ ...op, attempt: n }),
              );
              break;
            case 'skip':
              outcome = recordSkip(ledger, job.id, l.id, {
                type: 'skip',
                task: op.task,
                at: 300,
                state: 'cancelled',
              });
              break;
            case 'error':
              outcome = recordError(ledger, job.id, l.id, op.task, 'Eqw');
              break;
            case 'restate':
              outcome = restateEnd(
                ledger,
                job.id,
                l.id,
                op.task,
                op.aim && newestHere ? newestHere.attempt : n,
                op.aim && newestHere && newestHere.state !== 'running'
                  ? (newestHere.state as TerminalState)
                  : op.from,
                op.to,
                'the backend says so',
              );
              break;
            case 'unfinished':
              markUnfinished(ledger, job.id, l.id, op.ids, op.state, 'gone');
              break;
            case 'assign':
              outcome = assignTask(ledger, l.id, { task: op.task, attempt: 1, tries: 0 }, 'w');
              break;
            case 'unassign':
              outcome = unassign(ledger, l.id, heldTask);
              break;
            case 'finish':
              outcome = finishTask(ledger, l.id, heldTask);
              break;
            case 'lost':
              outcome = markLost(ledger, job.id, l.id, op.task, 'worker gone');
              break;
            case 'requeue':
              outcome = requeueForRetry(ledger, job.id, l.id, op.task, n, 0);
              break;
            case 'cancel':
              if (l.pool) cancelPoolTasks(ledger, l, op.ids);
              break;
            case 'close':
              ledger.write(() => closeLaunchIfDone(ledger, l.id));
              break;
          }
        }
        if (outcome?.kind === 'refused') {
          seen.refused++;
          assert.equal(dump(ledger), rows, `a refused ${op.kind} changed nothing`);
          assert.ok(
            !outcome.move.from || !isLegalMove(outcome.move.from, outcome.move.to),
            'refused only what is illegal',
          );
        } else if (outcome?.kind === 'applied') seen.applied.add(op.kind);
        for (const [key, now] of launchStates(ledger)) {
          const was = before.get(key) ?? 'pending';
          assert.ok(
            isLegalMove(was, now),
            `${op.kind}: ${key} moved ${was} → ${now}, which the table forbids`,
          );
          if (was !== now) seen.moves.add(`${was}→${now}`);
        }
        for (const key of before.keys()) assert.ok(launchStates(ledger).has(key), `${key} was not dropped`);
        checkInvariants(ledger, job.id);
      }
    }),
    { numRuns: 150 },
  );
  // The run exercised every transition and the table, refusals included (else the property says little).
  const kinds = [
    'start',
    'end',
    'endWithoutStart',
    'attempt',
    'skip',
    'error',
    'restate',
    'assign',
    'unassign',
    'finish',
    'lost',
    'requeue',
  ];
  assert.deepEqual([...seen.applied].sort(), kinds.sort(), 'every transition was applied at least once');
  assert.ok(seen.refused > 0, 'some were refused');
  assert.ok(seen.moves.size >= 20, `moves seen: ${[...seen.moves].join(' ')}`);
});

test('the table: nothing leaves succeeded, nothing goes back to pending, staying put is always legal', () => {
  for (const s of STATES) {
    assert.ok(isLegalMove(s, s), `${s} → ${s}`);
    if (s !== 'succeeded') assert.ok(!isLegalMove('succeeded', s), `succeeded → ${s}`);
    if (s !== 'pending') assert.ok(!isLegalMove(s, 'pending'), `${s} → pending`);
  }
  assert.deepEqual(MOVES.pending, ['queued']);
});
