import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { DroverError } from '../../src/errors.js';
import { parseVisibleGpus, planSlots } from '../../src/runner/slots.js';

test('without GPUs: one slot per CPU, or CPUs / cpusPerTask (at least 1); maxTasks overrides', () => {
  assert.equal(planSlots({ cpusAvailable: 8 }).length, 8);
  assert.equal(planSlots({ cpusAvailable: 8, cpusPerTask: 3 }).length, 2);
  assert.equal(planSlots({ cpusAvailable: 2, cpusPerTask: 4 }).length, 1);
  assert.equal(planSlots({ cpusAvailable: 2, maxTasks: 5 }).length, 5);
  assert.equal(planSlots({ cpusAvailable: 16, maxTasks: 3 }).length, 3);
  const slots = planSlots({ cpusAvailable: 3 });
  assert.deepEqual(slots, [
    { index: 0, gpus: [] },
    { index: 1, gpus: [] },
    { index: 2, gpus: [] },
  ]);
});

test('with GPUs per task: each slot gets its own GPUs, and no more slots than the GPUs fill', () => {
  assert.deepEqual(
    planSlots({ cpusAvailable: 8, gpusPerTask: 2, visibleGpus: ['0', '1', '2', '3'] }).map((s) => s.gpus),
    [
      ['0', '1'],
      ['2', '3'],
    ],
  );
  assert.deepEqual(
    planSlots({ cpusAvailable: 8, maxTasks: 2, gpusPerTask: 1, visibleGpus: ['4', '5', '6'] }).map(
      (s) => s.gpus,
    ),
    [['4'], ['5']],
  );
  assert.deepEqual(
    planSlots({ cpusAvailable: 8, gpusPerTask: 3, visibleGpus: ['0', '1', '2', '3'] }).map((s) => s.gpus),
    [['0', '1', '2']],
  );
  assert.deepEqual(
    planSlots({ cpusAvailable: 1, maxTasks: 8, gpusPerTask: 1, visibleGpus: ['GPU-a', 'GPU-b'] }).map(
      (s) => s.gpus,
    ),
    [['GPU-a'], ['GPU-b']],
  );
});

test('asking for more GPUs per task than are visible is a usage error naming the numbers', () => {
  for (const visibleGpus of [[], ['0']]) {
    assert.throws(
      () => planSlots({ cpusAvailable: 4, gpusPerTask: 2, visibleGpus }),
      (err: unknown) =>
        err instanceof DroverError &&
        err.exitCode === 2 &&
        /2 GPU/.test(err.message) &&
        !err.message.includes('\n'),
    );
  }
});

test('GPU sets of slots are disjoint, of the asked size, and never more slots than asked', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 16 }),
      fc.integer({ min: 1, max: 4 }),
      fc.option(fc.integer({ min: 1, max: 10 }), { nil: undefined }),
      fc.integer({ min: 1, max: 64 }),
      (n, k, maxTasks, cpus) => {
        const visibleGpus = Array.from({ length: n }, (_, i) => String(i));
        if (k > n) {
          assert.throws(() => planSlots({ cpusAvailable: cpus, maxTasks, gpusPerTask: k, visibleGpus }));
          return;
        }
        const slots = planSlots({ cpusAvailable: cpus, maxTasks, gpusPerTask: k, visibleGpus });
        assert.ok(slots.length >= 1);
        assert.ok(slots.length <= Math.floor(n / k));
        assert.ok(slots.length <= (maxTasks ?? cpus));
        const all = slots.flatMap((s) => s.gpus);
        assert.equal(new Set(all).size, all.length, 'disjoint');
        for (const s of slots) assert.equal(s.gpus.length, k);
        assert.deepEqual(
          slots.map((s) => s.index),
          slots.map((_, i) => i),
        );
      },
    ),
  );
});

test('parseVisibleGpus reads CUDA_VISIBLE_DEVICES', () => {
  assert.deepEqual(parseVisibleGpus(undefined), []);
  assert.deepEqual(parseVisibleGpus(''), []);
  assert.deepEqual(parseVisibleGpus('NoDevFiles'), []);
  assert.deepEqual(parseVisibleGpus('0,1,2,3'), ['0', '1', '2', '3']);
  assert.deepEqual(parseVisibleGpus(' 2, 3 ,'), ['2', '3']);
});

test('a runner that knows its tasks gets no more slots than it has tasks: slots cost nothing until used', () => {
  assert.equal(planSlots({ cpusAvailable: 2, maxTasks: 10_000_000, tasks: 10 }).length, 10);
  assert.equal(planSlots({ cpusAvailable: 64, tasks: 3 }).length, 3);
  assert.equal(planSlots({ cpusAvailable: 4, tasks: 0 }).length, 1);
  assert.equal(planSlots({ cpusAvailable: 4, maxTasks: 2, tasks: 100 }).length, 2);
  assert.equal(
    planSlots({ cpusAvailable: 8, gpusPerTask: 1, visibleGpus: ['0', '1', '2'], tasks: 2 }).length,
    2,
  );
});
