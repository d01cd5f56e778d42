import assert from 'node:assert/strict';
import { test } from 'node:test';
import { planGroups, planSubmissions } from '../../src/backends/cluster/plan.js';
import { formatBlocks } from '../../src/tasklist/tasklist.js';

const tasks = (ids: number[]) => ids.map((id) => ({ id, command: `c${id}`, tag: '', attempt: 1 }));

test('one task per element keys groups by task id', () => {
  const g = planGroups(tasks([1, 2, 3, 5, 13]), 1);
  assert.deepEqual(
    g.map((x) => [x.key, x.tasks.map((t) => t.id)]),
    [
      [1, [1]],
      [2, [2]],
      [3, [3]],
      [5, [5]],
      [13, [13]],
    ],
  );
});

test('packing makes consecutive groups of N, the last one smaller', () => {
  const g = planGroups(tasks([1, 2, 3, 5, 6, 7, 8, 9, 13]), 4);
  assert.deepEqual(
    g.map((x) => [x.key, x.tasks.map((t) => t.id)]),
    [
      [1, [1, 2, 3, 5]],
      [2, [6, 7, 8, 9]],
      [3, [13]],
    ],
  );
});

test('Slurm: keys that fit stay the array indices, in one submission', () => {
  const subs = planSubmissions([1, 2, 3, 5, 6, 7, 8, 9, 13], {
    maxIndex: 1000,
    maxCount: 1000,
    oneRangePerSubmission: false,
  });
  assert.equal(subs.length, 1);
  assert.equal(subs[0]!.offset, 0);
  assert.equal(formatBlocks(subs[0]!.blocks), '1-3,5-9,13');
});

test('Slurm: keys past MaxArraySize are split and re-based to start at 1', () => {
  const keys = Array.from({ length: 250 }, (_, i) => i + 1);
  const subs = planSubmissions(keys, { maxIndex: 99, maxCount: 100, oneRangePerSubmission: false });
  assert.deepEqual(
    subs.map((s) => [s.offset, formatBlocks(s.blocks), s.count]),
    [
      [0, '1-99', 99],
      [99, '1-99', 99],
      [198, '1-52', 52],
    ],
  );
  const back = subs.flatMap((s) =>
    s.blocks.flatMap((b) => Array.from({ length: b.last - b.first + 1 }, (_, i) => b.first + i + s.offset)),
  );
  assert.deepEqual(back, keys);
});

test('one range per submission: each block of keys is a submission of its own', () => {
  const subs = planSubmissions([1, 2, 3, 5, 6, 7, 8, 9, 13], {
    maxIndex: 75000,
    maxCount: 75000,
    oneRangePerSubmission: true,
  });
  assert.deepEqual(
    subs.map((s) => [formatBlocks(s.blocks), s.count]),
    [
      ['1-3', 3],
      ['5-9', 5],
      ['13', 1],
    ],
  );
});

test('Grid Engine: elements 1..k are one submission within the limit, as few as it needs past it', () => {
  const ge = (n: number) => ({ maxIndex: n, maxCount: n, oneRangePerSubmission: true });
  const keys = (k: number) => Array.from({ length: k }, (_, i) => i + 1);
  const one = planSubmissions(keys(9), ge(75000));
  assert.deepEqual(
    one.map((s) => [s.offset, formatBlocks(s.blocks), s.count]),
    [[0, '1-9', 9]],
  );
  assert.deepEqual(
    planSubmissions(keys(75000), ge(75000)).map((s) => [s.offset, formatBlocks(s.blocks)]),
    [[0, '1-75000']],
  );
  const split = planSubmissions(keys(160001), ge(75000));
  assert.deepEqual(
    split.map((s) => [s.offset, formatBlocks(s.blocks), s.count]),
    [
      [0, '1-75000', 75000],
      [75000, '1-75000', 75000],
      [150000, '1-10001', 10001],
    ],
  );
  assert.deepEqual(
    planSubmissions(keys(5), ge(Number.POSITIVE_INFINITY)).map((s) => formatBlocks(s.blocks)),
    ['1-5'],
  );
});
