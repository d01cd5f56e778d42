import assert from 'node:assert/strict';
import { test } from 'node:test';
import { indexRanges, scancelTargets } from '../../../src/backends/slurm/cancel.js';
import { elementLookup, groupKeys } from '../../../src/backends/slurm/handles.js';

test('scancel index lists have no steps (scancel refuses A_[3-9:2])', () => {
  assert.equal(indexRanges([9, 3, 5, 7, 1, 2]), '1-3,5,7,9');
  assert.equal(indexRanges([4]), '4');
});

test('group keys: task ids with one task per element, chunks numbered from 1 when packed', () => {
  assert.deepEqual(
    [...groupKeys([1, 2, 5, 9], 1)],
    [
      [1, 1],
      [2, 2],
      [5, 5],
      [9, 9],
    ],
  );
  assert.deepEqual(
    [...groupKeys([1, 2, 5, 9, 10], 2)],
    [
      [1, 1],
      [2, 1],
      [5, 2],
      [9, 2],
      [10, 3],
    ],
  );
});

test('elements of split arrays are found by group key through each array’s offset', () => {
  const of = elementLookup([
    { id: '10', offset: 0, array: '1-9' },
    { id: '11', offset: 9, array: '1-9' },
    { id: '12', offset: 18, array: '1-3,5' },
  ]);
  assert.deepEqual(of(4), { arrayId: '10', index: 4 });
  assert.deepEqual(of(12), { arrayId: '11', index: 3 });
  assert.deepEqual(of(23), { arrayId: '12', index: 5 });
  assert.equal(of(22), undefined);
});

test('one task per element: each cancelled task’s element is scancelled, batched per array', () => {
  const arrays = [
    { id: '10', offset: 0, array: '1-9' },
    { id: '11', offset: 9, array: '1-9' },
  ];
  const active = [1, 2, 3, 4, 5, 10, 11, 12];
  assert.deepEqual(
    scancelTargets(arrays, (t) => t, active, [1, 3, 4, 11, 12]),
    ['10_[1,3-4]', '11_[2-3]'],
  );
  assert.deepEqual(
    scancelTargets(arrays, (t) => t, active, 'all'),
    ['10', '11'],
  );
});

test('packed: only elements whose every active task is cancelled are scancelled', () => {
  const arrays = [{ id: '20', offset: 0, array: '1-3' }];
  const keys = groupKeys([1, 2, 3, 4, 5, 6], 2); // elements 1: 1-2, 2: 3-4, 3: 5-6
  const keyOf = (t: number) => keys.get(t)!;
  // Task 4 has ended already (not active): element 2 is scancelled for task 3 alone; element 1 keeps task 2.
  assert.deepEqual(scancelTargets(arrays, keyOf, [1, 2, 3, 5, 6], [1, 3]), ['20_[2]']);
});
