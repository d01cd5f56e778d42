import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { EndRecord, StartRecord } from '../../src/runner/records.js';
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
  o.holding.set('1:5', { launch: 1, task: 5 });
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
