import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  canTake,
  inRuns,
  type LaunchView,
  planDispatch,
  prefetchPerSlot,
  type WorkerView,
} from '../../src/controller/dispatch.js';
import { afterAttempt, chooseToDrain, silentWorkers } from '../../src/controller/policy.js';

const res = (cpus: number, gpus = 0, mem_mb = 0) => ({ cpus, gpus, mem_mb });

function worker(
  id: string,
  slots: number,
  capacity = res(slots),
  extra: Partial<WorkerView> = {},
): WorkerView {
  return {
    id,
    pool: 'p',
    accepting: true,
    slots,
    capacity,
    used: res(0),
    count: 0,
    slotShapedOnly: true,
    ...extra,
  };
}

function launch(id: number, ready: number, demand = res(1), extra: Partial<LaunchView> = {}): LaunchView {
  return { id, pool: 'p', demand, ready, inFlight: 0, prefetch: 0, ...extra };
}

const count = (plan: { worker: string; launch: number }[], key: 'worker' | 'launch') =>
  plan.reduce<Record<string, number>>((m, a) => {
    m[String(a[key])] = (m[String(a[key])] ?? 0) + 1;
    return m;
  }, {});

test('fills every free slot and no more when tasks are long (no prefetch)', () => {
  const plan = planDispatch([worker('a', 2), worker('b', 3)], [launch(1, 100)]);
  assert.equal(plan.length, 5);
  assert.deepEqual(count(plan, 'worker'), { a: 2, b: 3 });
});

test('short tasks are prefetched up to `prefetch` per slot', () => {
  const plan = planDispatch([worker('a', 1), worker('b', 1)], [launch(1, 100, res(1), { prefetch: 2 })]);
  assert.deepEqual(count(plan, 'worker'), { a: 3, b: 3 });
});

test('prefetched tasks are topped up in halves: not after each ended task, and never past the depth', () => {
  // 1 slot, 10 per slot ahead: a full worker holds 11 (1 running, 10 waiting).
  const short = launch(1, 100, res(1), { prefetch: 10 });
  const holding = (n: number) => worker('a', 1, res(1), { used: res(1), count: n });
  assert.equal(planDispatch([holding(11)], [short]).length, 0, 'full');
  assert.equal(planDispatch([holding(10)], [short]).length, 0, 'one ended: no answer for one task');
  assert.equal(planDispatch([holding(7)], [short]).length, 0, 'four ended: still more than half left');
  assert.equal(planDispatch([holding(6)], [short]).length, 5, 'half left: topped up to full');
  assert.equal(planDispatch([holding(1)], [short]).length, 10);
  // A free slot is always filled, low on prefetch or not.
  assert.equal(planDispatch([worker('b', 1)], [short]).length, 11);
});

test('resource-aware: CPUs, GPUs and memory of a task against a worker’s free capacity', () => {
  // 4 CPUs, 2 GPUs, 8 GiB, 4 slots: tasks of 2 CPUs and 1 GPU fit twice.
  const w = worker('a', 4, res(4, 2, 8192));
  assert.equal(planDispatch([w], [launch(1, 10, res(2, 1))]).length, 2);
  // Memory: 3 GiB tasks fit twice in 8 GiB.
  assert.equal(planDispatch([w], [launch(1, 10, res(1, 0, 3072))]).length, 2);
  // Several tasks per worker when they fit.
  assert.equal(planDispatch([w], [launch(1, 10, res(1))]).length, 4);
  // A task bigger than a slot's share is never prefetched, even for short tasks.
  assert.equal(planDispatch([w], [launch(1, 10, res(2), { prefetch: 2 })]).length, 2);
  // Nothing fits a worker that is busy.
  const busy = { ...w, used: res(4, 0), count: 1, slotShapedOnly: false };
  assert.equal(canTake(busy, res(1), 4), false);
});

test('a worker that does not accept (setup, draining) or is of another pool gets nothing', () => {
  const plan = planDispatch(
    [worker('a', 2, res(2), { accepting: false }), worker('b', 2, res(2), { pool: 'q' })],
    [launch(1, 10)],
  );
  assert.deepEqual(plan, []);
});

test('fair between concurrent launches: each next task to the launch with the fewest in flight', () => {
  const plan = planDispatch([worker('a', 4), worker('b', 4)], [launch(1, 100), launch(2, 100)]);
  assert.deepEqual(count(plan, 'launch'), { 1: 4, 2: 4 });
  const later = planDispatch([worker('a', 4)], [launch(1, 100, res(1), { inFlight: 3 }), launch(2, 100)]);
  assert.deepEqual(count(later, 'launch'), { 1: 1, 2: 3 });
});

test('spreads tasks over the workers with the most free slots', () => {
  const plan = planDispatch([worker('a', 4), worker('b', 4)], [launch(1, 4)]);
  assert.deepEqual(count(plan, 'worker'), { a: 2, b: 2 });
});

test('inRuns: the same assignments, each worker’s of a launch together, pairs in the order the plan first names them', () => {
  const assignment = fc.record({
    worker: fc.constantFrom('a', 'b', 'c'),
    launch: fc.integer({ min: 1, max: 3 }),
  });
  fc.assert(
    fc.property(fc.array(assignment, { maxLength: 60 }), (plan) => {
      const out = inRuns(plan);
      const key = (a: { worker: string; launch: number }) => `${a.launch} ${a.worker}`;
      assert.deepEqual(out.map(key).sort(), plan.map(key).sort());
      // Each pair is one run, and the runs come in the order of each pair's first assignment in the plan.
      const runs = out.map(key).filter((k, i, all) => i === 0 || all[i - 1] !== k);
      assert.deepEqual(runs, [...new Set(plan.map(key))]);
    }),
  );
  // Three workers planned in turn over six tasks: each gets two consecutive ones.
  const plan = ['a', 'b', 'c', 'a', 'b', 'c'].map((worker) => ({ worker, launch: 1 }));
  assert.deepEqual(
    inRuns(plan).map((a) => a.worker),
    ['a', 'a', 'b', 'b', 'c', 'c'],
  );
});

test('retry with backoff while retries remain; never after success or cancel', () => {
  const half = () => 0.5; // no jitter
  assert.deepEqual(afterAttempt('failed', 1, 2, 1, 100, half), { kind: 'retry', notBefore: 101 });
  assert.deepEqual(afterAttempt('lost', 2, 2, 1, 100, half), { kind: 'retry', notBefore: 102 });
  assert.deepEqual(afterAttempt('failed', 3, 2, 1, 100, half), { kind: 'done' });
  assert.deepEqual(afterAttempt('succeeded', 1, 5, 1, 100, half), { kind: 'done' });
  assert.deepEqual(afterAttempt('cancelled', 1, 5, 1, 100, half), { kind: 'done' });
  assert.deepEqual(afterAttempt('failed', 1, 0, 1, 100, half), { kind: 'done' });
});

test('prefetch: none for long or unknown tasks, about 0.1 s of work per slot for short ones', () => {
  assert.equal(prefetchPerSlot(undefined), 0);
  assert.equal(prefetchPerSlot(5), 0);
  assert.equal(prefetchPerSlot(0.5), 1);
  assert.equal(prefetchPerSlot(0.02), 5);
  assert.equal(prefetchPerSlot(0.002), 50);
  assert.equal(prefetchPerSlot(0.0001), 100);
});

test('workers silent for longer than lost-after are lost', () => {
  const ws = [
    { id: 'a', lastSeen: 100, alive: true },
    { id: 'b', lastSeen: 95, alive: true },
    { id: 'c', lastSeen: 50, alive: false },
  ];
  assert.deepEqual(silentWorkers(ws, 106, 10), ['b']);
});

test('scaling down drains the idlest workers first, and among equally idle ones the oldest', () => {
  const w = (id: string, tasks: number, registeredAt: number) => ({ id, tasks, registeredAt });
  const workers = [w('new-idle', 0, 30), w('old-busy', 3, 10), w('old-idle', 0, 10), w('mid-idle', 0, 20)];
  assert.deepEqual(chooseToDrain(workers, 2), ['old-idle', 'mid-idle']);
  assert.deepEqual(chooseToDrain(workers, 4), ['old-idle', 'mid-idle', 'new-idle', 'old-busy']);
  assert.deepEqual(chooseToDrain(workers, 0), []);
  assert.deepEqual(chooseToDrain(workers, 9).length, 4);
});

test('a task with a time limit goes only to a worker whose own time left covers it', () => {
  const limited = launch(1, 10, res(1), { timeNeeded: 600 });
  const short = worker('short', 4, res(4), { timeLeft: 300 });
  const long = worker('long', 1, res(1), { timeLeft: 900 });
  const unknown = worker('unknown', 1, res(1));
  assert.deepEqual(count(planDispatch([short, long, unknown], [limited]), 'worker'), { long: 1, unknown: 1 });
  assert.equal(
    planDispatch([short], [launch(1, 10, res(1), { timeNeeded: 300 })]).length,
    4,
    'exactly enough',
  );
  assert.equal(planDispatch([short], [launch(1, 10)]).length, 4, 'a task with no limit goes anywhere');
});
