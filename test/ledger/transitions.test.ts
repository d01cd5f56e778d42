import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  closeLaunchIfDone,
  markUnfinished,
  recordEnd,
  recordSkip,
  recordStart,
} from '../../src/ledger/transitions.js';
import {
  attemptRows,
  end,
  launch,
  launchState,
  makeJob,
  start,
  syncJob,
  taskRow,
  tempLedger,
} from '../helpers/ledger.js';

test('createLaunch queues the tasks in the launch and as their newest launch', (t) => {
  const ledger = tempLedger(t);
  const job = makeJob(ledger, 'J', 3);
  const l = launch(ledger, job, [1, 3]);
  assert.equal(l.tasklist, '1,3');
  assert.deepEqual(taskRow(ledger, job, 1), {
    state: 'queued',
    exit_code: null,
    attempts: 0,
    last_launch_id: l.id,
  });
  assert.equal(taskRow(ledger, job, 2).state, 'pending');
  assert.equal(launchState(ledger, l.id, 3), 'queued');
  assert.equal(launchState(ledger, l.id, 2), undefined);
});

test('recordStart: queued → running, counts the attempt, and applying it twice changes nothing more', (t) => {
  const ledger = tempLedger(t);
  const job = makeJob(ledger, 'J', 2);
  const l = launch(ledger, job, [1, 2]);
  for (let i = 0; i < 2; i++) ledger.write(() => recordStart(ledger, job.id, l.id, start(1, 1)));
  assert.deepEqual(taskRow(ledger, job, 1), {
    state: 'running',
    exit_code: null,
    attempts: 1,
    last_launch_id: l.id,
  });
  assert.equal(launchState(ledger, l.id, 1), 'running');
  assert.equal(attemptRows(ledger, job, 1).length, 1);
  assert.equal(taskRow(ledger, job, 2).state, 'queued');
});

test('recordEnd: running → its end state with the exit code; a second end of the same attempt is ignored', (t) => {
  const ledger = tempLedger(t);
  const job = makeJob(ledger, 'J', 1);
  const l = launch(ledger, job, [1]);
  ledger.write(() => {
    recordStart(ledger, job.id, l.id, start(1, 1));
    recordEnd(ledger, job.id, l.id, end(1, 1, 'failed', 3));
    recordEnd(ledger, job.id, l.id, end(1, 1, 'succeeded', 0, 102));
  });
  assert.deepEqual(taskRow(ledger, job, 1), {
    state: 'failed',
    exit_code: 3,
    attempts: 1,
    last_launch_id: l.id,
  });
  assert.equal(launchState(ledger, l.id, 1), 'failed');
  const [a] = attemptRows(ledger, job, 1);
  assert.deepEqual([a!.state, a!.exit_code, a!.ended_at], ['failed', 3, 101]);
});

test('retries within a launch: the task takes the state of its latest attempt', (t) => {
  const ledger = tempLedger(t);
  const job = makeJob(ledger, 'J', 1);
  const l = launch(ledger, job, [1]);
  ledger.write(() => {
    recordStart(ledger, job.id, l.id, start(1, 1));
    recordEnd(ledger, job.id, l.id, end(1, 1, 'killed', null));
    recordStart(ledger, job.id, l.id, start(1, 2, 102));
  });
  assert.deepEqual(taskRow(ledger, job, 1), {
    state: 'running',
    exit_code: null,
    attempts: 2,
    last_launch_id: l.id,
  });
  ledger.write(() => recordEnd(ledger, job.id, l.id, end(1, 2, 'succeeded', 0, 103)));
  assert.deepEqual(taskRow(ledger, job, 1), {
    state: 'succeeded',
    exit_code: 0,
    attempts: 2,
    last_launch_id: l.id,
  });
  assert.deepEqual(
    attemptRows(ledger, job, 1).map((a) => [a.attempt, a.state]),
    [
      [1, 'killed'],
      [2, 'succeeded'],
    ],
  );
});

test('recordSkip: a queued task becomes cancelled; running and succeeded ones are left alone', (t) => {
  const ledger = tempLedger(t);
  const job = makeJob(ledger, 'J', 3);
  const l = launch(ledger, job, [1, 2, 3]);
  const skip = (task: number) => ({ type: 'skip' as const, task, at: 105, state: 'cancelled' as const });
  ledger.write(() => {
    recordStart(ledger, job.id, l.id, start(2, 1));
    recordStart(ledger, job.id, l.id, start(3, 1));
    recordEnd(ledger, job.id, l.id, end(3, 1, 'succeeded', 0));
    for (const id of [1, 2, 3]) recordSkip(ledger, job.id, l.id, skip(id));
  });
  assert.deepEqual(
    [1, 2, 3].map((id) => [taskRow(ledger, job, id).state, launchState(ledger, l.id, id)]),
    [
      ['cancelled', 'cancelled'],
      ['running', 'running'],
      ['succeeded', 'succeeded'],
    ],
  );
});

test('markUnfinished: queued and running tasks become lost, their running attempt ends; others untouched', (t) => {
  const ledger = tempLedger(t);
  const job = makeJob(ledger, 'J', 3);
  const l = launch(ledger, job, [1, 2, 3]);
  const changed = ledger.write(() => {
    recordStart(ledger, job.id, l.id, start(1, 1));
    recordStart(ledger, job.id, l.id, start(3, 1));
    recordEnd(ledger, job.id, l.id, end(3, 1, 'failed', 2));
    return markUnfinished(ledger, job.id, l.id, 'all', 'lost', 'runner gone');
  });
  assert.deepEqual([...changed].sort(), [1, 2]);
  assert.deepEqual(
    [1, 2, 3].map((id) => taskRow(ledger, job, id).state),
    ['lost', 'lost', 'failed'],
  );
  const [a] = attemptRows(ledger, job, 1);
  assert.equal(a!.state, 'lost');
  assert.equal(a!.reason, 'runner gone');
  assert.equal(attemptRows(ledger, job, 3)[0]!.state, 'failed');
  // Applying it again finds nothing left to change.
  assert.deepEqual(
    ledger.write(() => markUnfinished(ledger, job.id, l.id, 'all', 'lost', 'again')),
    [],
  );
});

test('after markUnfinished, a late end record from the runner still says what happened', (t) => {
  const ledger = tempLedger(t);
  const job = makeJob(ledger, 'J', 1);
  const l = launch(ledger, job, [1]);
  ledger.write(() => {
    recordStart(ledger, job.id, l.id, start(1, 1));
    markUnfinished(ledger, job.id, l.id, 'all', 'lost', 'runner gone');
  });
  assert.equal(taskRow(ledger, job, 1).state, 'lost');
  ledger.write(() => recordEnd(ledger, job.id, l.id, end(1, 1, 'succeeded', 0)));
  assert.deepEqual(taskRow(ledger, job, 1), {
    state: 'succeeded',
    exit_code: 0,
    attempts: 1,
    last_launch_id: l.id,
  });
  assert.equal(attemptRows(ledger, job, 1)[0]!.state, 'succeeded');
});

test('markUnfinished with ids touches only those tasks', (t) => {
  const ledger = tempLedger(t);
  const job = makeJob(ledger, 'J', 3);
  const l = launch(ledger, job, [1, 2, 3]);
  const changed = ledger.write(() => markUnfinished(ledger, job.id, l.id, [2], 'cancelled', 'by the user'));
  assert.deepEqual(changed, [2]);
  assert.deepEqual(
    [1, 2, 3].map((id) => taskRow(ledger, job, id).state),
    ['queued', 'cancelled', 'queued'],
  );
});

test("an older launch's late records do not overwrite the task's state in a newer launch", (t) => {
  const ledger = tempLedger(t);
  const job = makeJob(ledger, 'J', 1);
  const older = launch(ledger, job, [1]);
  ledger.write(() => recordStart(ledger, job.id, older.id, start(1, 1)));
  // While the older launch has the task running, no other launch may take it.
  assert.throws(() => launch(ledger, job, [1]), /task 1 of 'J' is already queued or running/);
  // Its runner is declared gone: the task is lost, the launch done; a rerun is a newer launch.
  ledger.write(() => {
    markUnfinished(ledger, job.id, older.id, 'all', 'lost', 'runner gone');
    closeLaunchIfDone(ledger, older.id);
  });
  const newer = launch(ledger, job, [1]);
  assert.deepEqual(taskRow(ledger, job, 1), {
    state: 'queued',
    exit_code: null,
    attempts: 1,
    last_launch_id: newer.id,
  });

  // The older runner's records arrive late after all.
  ledger.write(() => recordEnd(ledger, job.id, older.id, end(1, 1, 'failed', 9)));
  assert.equal(launchState(ledger, older.id, 1), 'failed', 'the older launch keeps its own outcome');
  assert.deepEqual(taskRow(ledger, job, 1), {
    state: 'queued',
    exit_code: null,
    attempts: 1,
    last_launch_id: newer.id,
  });

  ledger.write(() => {
    recordStart(ledger, job.id, newer.id, start(1, 2, 110));
    recordEnd(ledger, job.id, newer.id, end(1, 2, 'succeeded', 0, 111));
  });
  assert.deepEqual(taskRow(ledger, job, 1), {
    state: 'succeeded',
    exit_code: 0,
    attempts: 2,
    last_launch_id: newer.id,
  });
  assert.equal(launchState(ledger, older.id, 1), 'failed');
});

test('the states column refuses a state outside the closed set', (t) => {
  const ledger = tempLedger(t);
  const job = makeJob(ledger, 'J', 1);
  assert.throws(
    () => ledger.db.prepare("UPDATE tasks SET state = 'done' WHERE job_id = ?").run(job.id),
    /CHECK/,
  );
});

test('a requeue counts on its task, once, and never for a command the task no longer has (invariant 1)', (t) => {
  const ledger = tempLedger(t);
  const job = makeJob(ledger, 'J', 2);
  const l = launch(ledger, job, [1, 2]);
  const requeues = (task: number) =>
    ledger.db.prepare('SELECT requeues FROM tasks WHERE job_id = ? AND id = ?').pluck().get(job.id, task);
  ledger.write(() => {
    for (const task of [1, 2]) recordStart(ledger, job.id, l.id, start(task, 1));
    recordEnd(ledger, job.id, l.id, { ...end(1, 1, 'failed', 75), requeue: true });
    recordEnd(ledger, job.id, l.id, { ...end(1, 1, 'failed', 75), requeue: true }); // a replay
  });
  assert.equal(requeues(1), 1);
  assert.equal(taskRow(ledger, job, 1).state, 'queued');
  // Task 2's command changes while its attempt of the old command still runs; that attempt's requeue is its
  // old command's history: marked on the attempt, not counted on the task.
  syncJob(
    ledger,
    'J',
    new Map([
      [1, { command: 'echo 1', tag: '' }],
      [2, { command: 'echo two', tag: '' }],
    ]),
  );
  ledger.write(() => recordEnd(ledger, job.id, l.id, { ...end(2, 1, 'timeout', null), requeue: true }));
  assert.equal(requeues(2), 0);
  assert.equal(
    ledger.db.prepare('SELECT requeued FROM attempts WHERE job_id = ? AND task_id = 2').pluck().get(job.id),
    1,
  );
});
