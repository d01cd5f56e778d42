import assert from 'node:assert/strict';
import { test } from 'node:test';
import { keyedGroups, launchElements, readHandles } from '../../../src/backends/gridengine/handles.js';

const tasks = (ids: number[]) => ids.map((id) => ({ id, command: `c${id}`, tag: '', attempt: 1 }));

test('elements of a launch keyed by task id: one per task, in the array holding its id', () => {
  const h = {
    arrays: [
      { id: '11', offset: 0, range: '1-3:1' },
      { id: '12', offset: 0, range: '7-9:2' },
    ],
    tasksPerNode: 1,
    keys: 'task' as const,
  };
  assert.deepEqual(
    launchElements(h, [1, 2, 3, 7, 9]).map((e) => [e.job, e.index, e.tasks]),
    [
      ['11', 1, [1]],
      ['11', 2, [2]],
      ['11', 3, [3]],
      ['12', 7, [7]],
      ['12', 9, [9]],
    ],
  );
});

test('packed and re-keyed launches: key = 1 + position, index = key - offset', () => {
  assert.deepEqual(
    keyedGroups(tasks([4, 9, 20]), 1, 'index').map((g) => [g.key, g.tasks.map((t) => t.id)]),
    [
      [1, [4]],
      [2, [9]],
      [3, [20]],
    ],
  );
  const h = { arrays: [{ id: '5', offset: 0, range: '1-2:1' }], tasksPerNode: 3, keys: 'index' as const };
  assert.deepEqual(
    launchElements(h, [1, 2, 3, 4, 5]).map((e) => [e.index, e.tasks]),
    [
      [1, [1, 2, 3]],
      [2, [4, 5]],
    ],
  );
});

test('handles are read once the submission finished', () => {
  assert.equal(readHandles({ handles: '{}' }), undefined);
  assert.deepEqual(readHandles({ handles: '{"arrays":[{"id":"3","offset":0,"range":"1-1:1"}]}' }), {
    tasksPerNode: 1,
    keys: 'task',
    arrays: [{ id: '3', offset: 0, range: '1-1:1' }],
  });
});
