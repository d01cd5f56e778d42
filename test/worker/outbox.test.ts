import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { EndRecord, StartRecord } from '../../src/protocol/records.js';
import { Outbox } from '../../src/worker/outbox.js';

const start = (task: number): StartRecord => ({
  type: 'start',
  task,
  attempt: 1,
  at: 1,
  pid: 1,
  slot: 0,
  gpus: null,
  host: 'h',
  out: 'o',
  err: 'e',
});
const end = (task: number): EndRecord => ({
  type: 'end',
  task,
  attempt: 1,
  at: 2,
  state: 'succeeded',
  exit_code: 0,
  signal: null,
});

test('records are numbered in batches and resent until acknowledged; held tasks end with their acked end', () => {
  const o = new Outbox();
  o.holding.set('1:5', { launch: 1, task: 5, attempt: 1 });
  o.add(1, start(5));
  const first = o.take();
  assert.deepEqual(
    first.map((b) => [b.seq, b.launch, b.records.length]),
    [[1, 1, 1]],
  );
  o.add(1, end(5));
  // Not acknowledged (the controller was away): sent again, with the new batch after it.
  const again = o.take();
  assert.deepEqual(
    again.map((b) => b.seq),
    [1, 2],
  );
  o.ack(1);
  assert.equal(o.holding.size, 1);
  o.ack(2);
  assert.equal(o.holding.size, 0);
  assert.equal(o.pending, false);
  // A new controller that already applied up to 7 (seq restarts above it).
  o.ack(7);
  o.add(2, start(1));
  assert.equal(o.take()[0]!.seq, 8);
});

test('a report never exceeds its record and size limits, however much piled up; a batch is split to fit', () => {
  const o = new Outbox();
  for (let t = 1; t <= 5000; t++) o.add(1, start(t));
  o.add(2, end(1));
  const first = o.take(2000, 1 << 30);
  assert.equal(
    first.reduce((n, b) => n + b.records.length, 0),
    2000,
  );
  assert.ok(first.every((b) => b.records.length <= 2000));
  // By size: records of about 100 characters, at most 10,000 characters a report.
  const big = new Outbox();
  for (let t = 1; t <= 1000; t++) big.add(1, start(t));
  const report = big.take(2000, 10_000);
  const chars = report.flatMap((b) => b.records).reduce((n, r) => n + JSON.stringify(r).length, 0);
  assert.ok(chars <= 10_000, `${chars} characters`);
  assert.ok(report.length >= 1);
  // Everything goes, in order, over successive reports.
  let seen = 0;
  let last = 0;
  for (let i = 0; i < 200 && big.pending; i++) {
    const r = big.take(2000, 10_000);
    for (const b of r) {
      assert.ok(b.seq > last);
      last = b.seq;
      seen += b.records.length;
    }
    big.ack(last);
  }
  assert.equal(seen, 1000);
});

test('records the controller refused are dropped, with their task when it is that attempt', () => {
  const o = new Outbox();
  o.holding.set('1:5', { launch: 1, task: 5, attempt: 1 });
  o.holding.set('1:6', { launch: 1, task: 6, attempt: 2 });
  o.add(1, start(5));
  o.add(1, end(5));
  o.add(1, { ...start(6), attempt: 2 });
  o.take();
  // Attempt 1 of task 6 is refused, but the worker runs its attempt 2: task 6 stays held.
  o.refuse([
    { launch: 1, task: 5, attempt: 1 },
    { launch: 1, task: 6, attempt: 1 },
  ]);
  const left = o.take();
  assert.deepEqual(
    left.flatMap((b) => b.records.map((r) => [r.type, (r as StartRecord).task])),
    [['start', 6]],
  );
  assert.deepEqual([...o.holding.keys()], ['1:6']);
});

test('a batch emptied by a refusal is dropped, not sent again: an empty batch of a closed launch is refused forever', () => {
  const o = new Outbox();
  o.holding.set('1:5', { launch: 1, task: 5, attempt: 1 });
  o.add(1, end(5));
  o.take();
  assert.equal(o.refuse([{ launch: 1, task: 5, attempt: 1 }]), 1);
  assert.equal(o.pending, false, 'nothing is left to send');
  assert.deepEqual(o.take(), []);
  assert.equal(o.holding.size, 0);
});

test('a refusal naming a launch (task 0: it is not open) drops all of its records, sent or not, and its tasks', () => {
  const o = new Outbox();
  o.holding.set('1:5', { launch: 1, task: 5, attempt: 1 });
  o.holding.set('2:1', { launch: 2, task: 1, attempt: 1 });
  o.add(1, start(5));
  o.add(2, start(1));
  o.take();
  o.add(1, end(5));
  assert.equal(o.refuse([{ launch: 1, task: 0, attempt: 0 }]), 2);
  assert.deepEqual(
    o.take().map((b) => [b.launch, b.records.length]),
    [[2, 1]],
  );
  assert.deepEqual([...o.holding.keys()], ['2:1']);
  // A refusal of nothing it has drops nothing (the reporter then backs off rather than resend at once).
  assert.equal(o.refuse([{ launch: 9, task: 1, attempt: 1 }]), 0);
});

test('disowned attempts: their records go (a skip of such a task too), other attempts and tasks stay', () => {
  const o = new Outbox();
  o.holding.set('1:5', { launch: 1, task: 5, attempt: 2 });
  o.holding.set('1:6', { launch: 1, task: 6, attempt: 1 });
  o.holding.set('1:7', { launch: 1, task: 7, attempt: 1 });
  o.add(1, { ...start(5), attempt: 2 });
  o.add(1, start(6));
  o.take();
  o.add(1, { ...end(5), attempt: 2 });
  o.add(1, { type: 'skip', task: 7, at: 3, state: 'cancelled' });
  o.disown([
    { launch: 1, task: 5, attempt: 2 },
    { launch: 1, task: 7, attempt: 1 },
  ]);
  assert.deepEqual(
    o.take().flatMap((b) => b.records.map((r) => [r.type, (r as StartRecord).task])),
    [['start', 6]],
  );
  assert.deepEqual([...o.holding.keys()], ['1:6']);
  assert.deepEqual(o.held(), [{ launch: 1, task: 6, attempt: 1 }]);
});
