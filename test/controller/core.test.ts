import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ControllerCore } from '../../src/controller/core.js';
import { HttpError } from '../../src/controller/http-error.js';
import type { LiveLaunch, LiveWorker } from '../../src/controller/live.js';
import { takeAnswer } from '../../src/controller/poll-answer.js';
import { drainWorkers, stopPoolWorkers } from '../../src/controller/pool-commands.js';
import type { Clock, Log, Signals } from '../../src/controller/ports.js';
import { loadState } from '../../src/controller/restart.js';
import { ledgerStore } from '../../src/controller/store.js';
import { applyReport, applyReports, registerWorker } from '../../src/controller/worker-events.js';
import { syncJobTasks } from '../../src/ledger/job-sync.js';
import { Ledger } from '../../src/ledger/ledger.js';
import { droverPaths } from '../../src/paths.js';
import type { LaunchSettings, PollAnswer } from '../../src/protocol/messages.js';
import type { AttemptRecord } from '../../src/protocol/records.js';
import type { State } from '../../src/protocol/states.js';

/**
 * The controller's decisions in memory: no HTTP, no timers, no SQLite file. The core runs over the real ledger
 * store on an in-memory ledger, with a clock the test moves and a shell that only records what it was asked
 * (dispatch soon, wake a worker, set the retry timer); the test runs dispatch and the tick itself. The same
 * decisions run behind the real HTTP server in test/pool/*.test.ts.
 */

/** A clock the test moves by hand; jitter is fixed (random 0.5: no jitter). */
class TestClock implements Clock {
  t = 1_000_000;
  now(): number {
    return this.t;
  }
  random(): number {
    return 0.5;
  }
}

/** The shell's side, recorded. */
class RecordedSignals implements Signals {
  dispatches = 0;
  expands = 0;
  retries = 0;
  wakes: { worker: string; force: boolean }[] = [];
  changes: number[] = [];
  dispatchSoon(): void {
    this.dispatches++;
  }
  expandSoon(): void {
    this.expands++;
  }
  wake(w: LiveWorker, force = false): void {
    this.wakes.push({ worker: w.id, force });
  }
  changed(l: LiveLaunch): void {
    this.changes.push(l.id);
  }
  retriesChanged(): void {
    this.retries++;
  }
}

/** A log kept in memory. */
function memoryLog(): Log & { events: string[] } {
  const events: string[] = [];
  const put = (o: object) => events.push(String((o as { event?: string }).event));
  return { events, info: put, warn: put, error: put };
}

/** A core over an in-memory ledger. */
function world(t: { after(fn: () => void): void }, lostAfter = 30) {
  const ledger = Ledger.inMemory(droverPaths('/nonexistent/.drover'));
  t.after(() => ledger.close());
  const clock = new TestClock();
  const signals = new RecordedSignals();
  const log = memoryLog();
  const core = new ControllerCore(ledgerStore(ledger), clock, signals, log, { lostAfter });
  return { ledger, clock, signals, log, core };
}

type World = ReturnType<typeof world>;

/** A job of `n` tasks and a pool launch of all of them on pool `p` (the rows launch-create.ts makes). */
function poolLaunch(
  w: World,
  n: number,
  opts: { retries?: number; cpus?: number; taskTimeout?: number } = {},
): number {
  const entries = new Map(
    Array.from({ length: n }, (_, i) => [i + 1, { command: `echo ${i + 1}`, tag: '' }]),
  );
  const job = syncJobTasks(w.ledger, `J${n}`, '/nonexistent/jobs.json', entries, null).job;
  const db = w.ledger.db;
  const id = Number(
    db
      .prepare(
        "INSERT INTO launches (job_id, backend, tasklist, task_count, created_at, dir, options) VALUES (?, 'pool:p', ?, ?, 0, '/nonexistent', '{}')",
      )
      .run(job.id, `1-${n}`, n).lastInsertRowid,
  );
  const settings: LaunchSettings = {
    job: job.name,
    launch: id,
    cwd: '/',
    logDir: '/nonexistent/logs',
    killGrace: 5,
    ...(opts.taskTimeout !== undefined ? { taskTimeout: opts.taskTimeout } : {}),
  };
  db.prepare(
    `INSERT INTO pool_launches (launch_id, pool, tasklist, total, cpus, retries, retry_delay, settings)
     VALUES (?, 'p', ?, ?, ?, ?, 1, ?)`,
  ).run(id, `1-${n}`, n, opts.cpus ?? 1, opts.retries ?? 0, JSON.stringify(settings));
  w.core.loadLaunch(id);
  while (w.core.expandStep(5000)) {
    // make all its task rows
  }
  return id;
}

/** Register a worker of pool `p` with `slots` slots (as many CPUs). */
function register(w: World, slots: number, host = 'h'): LiveWorker {
  const r = registerWorker(w.core, {
    pool: 'p',
    host,
    pid: 100 + w.core.workers.size,
    resources: { cpus: slots, gpus: 0, mem_mb: 0 },
    slots,
    setup: false,
    holding: [],
  });
  return w.core.workers.get(r.id)!;
}

/** What a poll of the worker would be answered now. */
function poll(w: World, worker: LiveWorker): PollAnswer | undefined {
  w.core.polled(worker);
  return takeAnswer(worker);
}

function start(task: number, attempt: number, at: number): AttemptRecord {
  return { type: 'start', task, attempt, at, pid: 1, slot: 0, gpus: null, host: 'x', out: '', err: '' };
}

function end(task: number, attempt: number, at: number, state: 'succeeded' | 'failed'): AttemptRecord {
  return { type: 'end', task, attempt, at, state, exit_code: state === 'succeeded' ? 0 : 1, signal: null };
}

let seq = 0;
/** A worker reports records of one launch. */
function report(w: World, worker: LiveWorker, launch: number, records: AttemptRecord[]) {
  return applyReport(w.core, worker, [{ seq: ++seq, launch, records }]);
}

function taskState(w: World, launch: number, task: number): State {
  return (
    w.ledger.db
      .prepare('SELECT state FROM launch_tasks WHERE launch_id = ? AND task_id = ?')
      .get(launch, task) as {
      state: State;
    }
  ).state;
}

test('dispatch spreads tasks over workers by free slots, sends the settings once, and wakes who got some', (t) => {
  const w = world(t);
  const a = register(w, 2, 'a');
  const b = register(w, 1, 'b');
  const id = poolLaunch(w, 5);
  w.signals.wakes = [];
  w.core.dispatch();
  assert.deepEqual(
    [a, b].map((x) => [...x.held.values()].map((h) => h.task)),
    [[1, 2], [3]],
    'the one with the most free slots first (ties: the first)',
  );
  assert.deepEqual(w.signals.wakes.map((x) => x.worker).sort(), [a.id, b.id].sort());
  const got = poll(w, a)!;
  assert.deepEqual(
    got.tasks.map((x) => [x.task, x.attempt, x.command, x.settings !== undefined]),
    [
      [1, 1, 'echo 1', true],
      [2, 1, 'echo 2', false],
    ],
  );
  assert.equal(poll(w, a), undefined, 'an answer is sent once; nothing waits now');
  assert.deepEqual(takeAnswer(a, true), { tasks: [], cancel: [] }, 'a forced answer may be empty');
  // Nothing else fits: another pass hands out nothing.
  w.core.dispatch();
  assert.equal(a.held.size + b.held.size, 3);
  assert.equal(taskState(w, id, 4), 'queued');
});

test('a reported end frees the slot: the next task goes out, and the launch closes after its last', (t) => {
  const w = world(t);
  const a = register(w, 1);
  const id = poolLaunch(w, 2);
  w.core.dispatch();
  assert.deepEqual(
    [...a.held.values()].map((h) => h.task),
    [1],
  );
  report(w, a, id, [start(1, 1, 10), end(1, 1, 11, 'succeeded')]);
  assert.equal(taskState(w, id, 1), 'succeeded');
  assert.equal(a.held.size, 0);
  w.core.dispatch();
  assert.deepEqual(
    [...a.held.values()].map((h) => h.task),
    [2],
  );
  report(w, a, id, [start(2, 1, 12)]);
  assert.equal(taskState(w, id, 2), 'running', 'a start alone: running');
  assert.ok(w.core.launches.has(id));
  report(w, a, id, [end(2, 1, 13, 'succeeded')]);
  assert.ok(!w.core.launches.has(id), 'done: out of memory');
  assert.ok(w.log.events.includes('launch-done'));
  assert.equal(
    (w.ledger.db.prepare('SELECT open FROM launches WHERE id = ?').get(id) as { open: number }).open,
    0,
  );
});

test('a failed attempt with retries left waits its backoff, then goes out again as the next attempt', (t) => {
  const w = world(t);
  const a = register(w, 1);
  const id = poolLaunch(w, 1, { retries: 1 });
  w.core.dispatch();
  report(w, a, id, [start(1, 1, 10), end(1, 1, 11, 'failed')]);
  assert.equal(taskState(w, id, 1), 'queued', 'requeued');
  const due = w.core.nextRetryAt()!;
  assert.ok(due > w.clock.now(), 'not at once');
  assert.ok(w.signals.retries > 0, 'the shell was asked to set its retry timer');
  w.core.dispatch();
  assert.equal(a.held.size, 0, 'not before its time');
  w.clock.t = due;
  w.core.dispatch();
  assert.deepEqual(
    [...a.held.values()].map((h) => [h.task, h.attempt]),
    [[1, 2]],
  );
  report(w, a, id, [start(1, 2, 20), end(1, 2, 21, 'failed')]);
  assert.equal(taskState(w, id, 1), 'failed', 'no retries left: its state stands');
  assert.ok(!w.core.launches.has(id));
});

test('a silent worker is lost at the tick: its started attempt is lost, its unreported one lost and run anew elsewhere', (t) => {
  const w = world(t, 30);
  const a = register(w, 2, 'a');
  const id = poolLaunch(w, 2);
  w.core.dispatch();
  assert.equal(a.held.size, 2);
  report(w, a, id, [start(1, 1, 10)]);
  const b = register(w, 2, 'b');
  w.clock.t += 20;
  w.core.heartbeat(b);
  w.core.tick();
  assert.ok(w.core.workers.has(a.id), 'not silent long enough yet');
  w.clock.t += 11;
  w.core.tick();
  assert.ok(!w.core.workers.has(a.id), 'lost after 30 s of silence');
  assert.equal(a.state, 'lost');
  assert.deepEqual(w.signals.wakes.at(-1), { worker: a.id, force: true }, 'its parked poll is answered');
  assert.equal(taskState(w, id, 1), 'lost', 'the started attempt: lost (no retries)');
  // Task 2 was handed to it and its start never reported: it may have started it (killed between the two), so
  // that attempt is lost, and the task goes again as attempt 2 whatever the retries (it may never have run).
  assert.equal(taskState(w, id, 2), 'queued', 'the unreported one: queued again');
  assert.deepEqual(
    w.ledger.db
      .prepare('SELECT attempt, state, started_at, ended_at, host, reason FROM attempts WHERE task_id = 2')
      .all(),
    [
      {
        attempt: 1,
        state: 'lost',
        started_at: null,
        ended_at: w.clock.t,
        host: a.host,
        reason: `worker ${a.id} on ${a.host} sent nothing for 30 s before it reported the start`,
      },
    ],
  );
  w.core.dispatch();
  assert.deepEqual(
    [...b.held.values()].map((h) => [h.task, h.attempt]),
    [[2, 2]],
    'the next attempt, elsewhere: attempt 1 may have run',
  );
  report(w, b, id, [start(2, 2, w.clock.t), end(2, 2, w.clock.t + 1, 'succeeded')]);
  assert.equal(taskState(w, id, 2), 'succeeded');
  assert.throws(
    () => report(w, a, id, [start(2, 1, 10)]),
    (e: unknown) => e instanceof HttpError,
    'the lost worker, back, cannot report the attempt it lost',
  );
});

test('a report of an attempt the worker does not hold is refused whole and changes nothing', (t) => {
  const w = world(t);
  const a = register(w, 1, 'a');
  const b = register(w, 1, 'b');
  const id = poolLaunch(w, 2);
  w.core.dispatch();
  const bTask = [...b.held.values()][0]!.task;
  const before = JSON.stringify(w.ledger.db.prepare('SELECT * FROM launch_tasks ORDER BY task_id').all());
  assert.throws(
    () => report(w, a, id, [start(bTask, 1, 10)]),
    (e: unknown) => e instanceof HttpError && e.status === 403 && e.code === 'not-yours',
  );
  assert.equal(
    JSON.stringify(w.ledger.db.prepare('SELECT * FROM launch_tasks ORDER BY task_id').all()),
    before,
  );
  assert.equal([...b.held.values()][0]!.started, false);
});

test('a worker that registers again without a task it was given gets it taken back; one not its own is disowned', (t) => {
  const w = world(t);
  const first = registerWorker(w.core, {
    pool: 'p',
    host: 'h',
    pid: 100,
    resources: { cpus: 2, gpus: 0, mem_mb: 0 },
    slots: 2,
    setup: false,
    holding: [],
  });
  const a = w.core.workers.get(first.id)!;
  const id = poolLaunch(w, 2);
  w.core.dispatch();
  report(w, a, id, [start(1, 1, 10)]);
  // It comes back (the controller or the network was away) holding task 1, not task 2 (that answer was lost),
  // and a task of a launch it was never given.
  const again = registerWorker(w.core, {
    id: first.id,
    secret: first.secret!,
    pool: 'p',
    host: 'h',
    pid: 100,
    resources: { cpus: 2, gpus: 0, mem_mb: 0 },
    slots: 2,
    setup: false,
    holding: [
      { launch: id, task: 1, attempt: 1 },
      { launch: 99, task: 9, attempt: 2 },
      // A worker of an earlier version names no attempt: such a task is cancelled through its next poll.
      { launch: 98, task: 8 },
    ],
  });
  assert.equal(again.id, first.id);
  assert.equal(again.secret, undefined, 'a secret is given once');
  assert.equal(w.core.workers.get(first.id), a, 'the same worker in memory');
  assert.deepEqual([...a.held.keys()], [`${id}:1`]);
  assert.deepEqual(again.disowned, [{ launch: 99, task: 9, attempt: 2 }]);
  assert.deepEqual(a.outCancel, [{ launch: 98, task: 8 }]);
  assert.deepEqual([...w.core.launches.get(id)!.retryWaiting.keys()], [2], 'task 2 goes out again');
  assert.throws(
    () =>
      registerWorker(w.core, {
        id: first.id,
        secret: 'wrong',
        pool: 'p',
        host: 'h',
        pid: 1,
        resources: { cpus: 1, gpus: 0, mem_mb: 0 },
        slots: 1,
        setup: false,
        holding: [],
      }),
    (e: unknown) => e instanceof HttpError && e.status === 403,
    'only the holder of its secret may register as it',
  );
});

test('drain and stop: the answer says so, and a draining worker is given nothing new', (t) => {
  const w = world(t);
  const a = register(w, 1);
  poolLaunch(w, 3);
  drainWorkers(w.core, [a.id]);
  assert.equal(a.state, 'draining');
  assert.equal(
    (w.ledger.db.prepare('SELECT state FROM pool_workers WHERE id = ?').get(a.id) as { state: string }).state,
    'draining',
  );
  w.core.dispatch();
  assert.equal(a.held.size, 0);
  assert.deepEqual(poll(w, a), { tasks: [], cancel: [], stop: 'drain' });
  assert.deepEqual(w.core.heartbeat(a), { stop: 'drain' });
  stopPoolWorkers(w.core, 'p');
  assert.equal(poll(w, a)?.stop, 'stop');
});

test('a cancel request left in the ledger reaches the worker holding the task; queued ones are cancelled at once', async (t) => {
  const w = world(t);
  const a = register(w, 1);
  const id = poolLaunch(w, 3);
  w.core.dispatch();
  report(w, a, id, [start(1, 1, 10)]);
  const { cancelPoolTasks } = await import('../../src/ledger/transitions.js');
  const launch = w.ledger.db.prepare('SELECT id, job_id FROM launches WHERE id = ?').get(id) as {
    id: number;
    job_id: number;
  };
  assert.deepEqual(cancelPoolTasks(w.ledger, launch, 'all'), [2, 3]);
  w.core.processCancels();
  assert.deepEqual(poll(w, a)?.cancel, [{ launch: id, task: 1 }]);
  report(w, a, id, [
    { type: 'end', task: 1, attempt: 1, at: 11, state: 'cancelled', exit_code: null, signal: 'SIGTERM' },
  ]);
  assert.deepEqual(
    [1, 2, 3].map((x) => taskState(w, id, x)),
    ['cancelled', 'cancelled', 'cancelled'],
  );
  assert.ok(!w.core.launches.has(id), 'nothing left: closed');
});

test('a restart loads what the ledger says: held tasks stay held; a task of a worker already gone is requeued', (t) => {
  const w = world(t);
  const a = register(w, 1, 'a');
  const b = register(w, 1, 'b');
  const id = poolLaunch(w, 3);
  w.core.dispatch();
  report(w, a, id, [start([...a.held.values()][0]!.task, 1, 10)]);
  // b is gone for good before the restart: its row says so.
  w.ledger.db.prepare("UPDATE pool_workers SET state = 'lost' WHERE id = ?").run(b.id);
  const again = new ControllerCore(ledgerStore(w.ledger), w.clock, new RecordedSignals(), memoryLog(), {
    lostAfter: 30,
  });
  loadState(again);
  const a2 = again.workers.get(a.id)!;
  assert.deepEqual(
    [...a2.held.values()].map((h) => [h.task, h.started]),
    [[1, true]],
  );
  assert.ok(!again.workers.has(b.id));
  const l = again.launches.get(id)!;
  assert.deepEqual([...l.retryWaiting.keys()], [2], "b's task waits to go out again, as the same attempt");
  assert.equal(l.inFlight, 1);
});

test('reports that arrive together are applied in one transaction; a refused one changes nothing of the others', (t) => {
  const w = world(t);
  const a = register(w, 1, 'a');
  const b = register(w, 1, 'b');
  const c = register(w, 1, 'c');
  const id = poolLaunch(w, 3);
  w.core.dispatch();
  const [ta, tb, tc] = [a, b, c].map((x) => [...x.held.values()][0]!.task);
  let commits = 0;
  const transaction = w.core.store.transaction;
  w.core.store.transaction = (fn) => {
    commits++;
    return transaction(fn);
  };
  const answers = applyReports(w.core, [
    { w: a, batches: [{ seq: 1, launch: id, records: [start(ta!, 1, 10), end(ta!, 1, 11, 'succeeded')] }] },
    // c reports b's task: refused, and nothing of it applied.
    { w: c, batches: [{ seq: 1, launch: id, records: [start(tb!, 1, 10)] }] },
    { w: b, batches: [{ seq: 1, launch: id, records: [start(tb!, 1, 10), end(tb!, 1, 12, 'failed')] }] },
  ]);
  assert.equal(commits, 1, 'one transaction for the two good reports');
  assert.deepEqual(answers[0], { seq: 1 });
  assert.ok(answers[1] instanceof HttpError && answers[1].status === 403, String(answers[1]));
  assert.deepEqual(answers[2], { seq: 1 });
  assert.equal(taskState(w, id, ta!), 'succeeded');
  assert.equal(taskState(w, id, tb!), 'failed');
  assert.equal(taskState(w, id, tc!), 'queued', "c's own task is untouched");
  assert.equal(c.held.size, 1);
});

test('a worker taken for lost registers again: the attempt it held is disowned in the answer, and its retry, handed to the same worker, is never cancelled', (t) => {
  const w = world(t, 5);
  const reg = {
    pool: 'p',
    host: 'h',
    pid: 100,
    resources: { cpus: 1, gpus: 0, mem_mb: 0 },
    slots: 1,
    setup: false,
  };
  const first = registerWorker(w.core, { ...reg, holding: [] });
  const a = w.core.workers.get(first.id)!;
  const id = poolLaunch(w, 1, { retries: 1 });
  w.core.dispatch();
  report(w, a, id, [start(1, 1, w.clock.t)]);
  // Silent (stopped) past --lost-after: attempt 1 is lost, and retried.
  w.clock.t += 6;
  w.core.tick();
  assert.equal(a.state, 'lost');
  assert.equal(w.ledger.db.prepare('SELECT state FROM attempts WHERE attempt = 1').pluck().get(), 'lost');
  // It wakes, still holding attempt 1, and registers again.
  const again = registerWorker(w.core, {
    ...reg,
    id: first.id,
    secret: first.secret!,
    holding: [{ launch: id, task: 1, attempt: 1 }],
  });
  assert.deepEqual(again.disowned, [{ launch: id, task: 1, attempt: 1 }]);
  const b = w.core.workers.get(first.id)!;
  assert.equal(b.state, 'ready');
  w.clock.t += 60;
  w.core.dispatch();
  const answer = poll(w, b)!;
  assert.deepEqual(
    answer.tasks.map((x) => [x.task, x.attempt]),
    [[1, 2]],
    'the retry goes to the only worker',
  );
  assert.deepEqual(answer.cancel, [], 'nothing cancels the task it was just given');
  // Its registration again, holding the retry: that is its own.
  const third = registerWorker(w.core, {
    ...reg,
    id: first.id,
    secret: first.secret!,
    holding: [{ launch: id, task: 1, attempt: 2 }],
  });
  assert.deepEqual(third.disowned, []);
  // Holding attempt 1 where the controller gave it attempt 2 (never received): 1 is disowned, 2 goes out again.
  const fourth = registerWorker(w.core, {
    ...reg,
    id: first.id,
    secret: first.secret!,
    holding: [{ launch: id, task: 1, attempt: 1 }],
  });
  assert.deepEqual(fourth.disowned, [{ launch: id, task: 1, attempt: 1 }]);
  assert.deepEqual([...w.core.launches.get(id)!.retryWaiting.keys()], [1]);
});

test('a task with a time limit goes only to a worker whose pool time limit leaves it that long', (t) => {
  const w = world(t);
  w.core.timeLimits.set('p', 100); // each worker of pool p ends 100 s after it registered
  const a = register(w, 1);
  w.clock.t += 50; // 50 s left
  const long = poolLaunch(w, 1, { taskTimeout: 60 });
  w.core.dispatch();
  assert.equal(a.held.size, 0, 'a 60 s task does not go to a worker with 50 s left');
  assert.equal(taskState(w, long, 1), 'queued');
  const b = register(w, 1); // a new worker: 100 s left
  w.core.dispatch();
  assert.deepEqual([a.held.size, b.held.size], [0, 1]);
  const short = poolLaunch(w, 1, { taskTimeout: 40 });
  w.core.dispatch();
  assert.deepEqual(
    [...a.held.values()].map((h) => h.launch),
    [short],
    'a 40 s task fits the 50 s left',
  );
});
