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

test('handles of older launches (no keys, one array per block) still place tasks by task id', () => {
  const h = readHandles({
    handles: JSON.stringify({
      arrays: [
        { id: '20', offset: 0, range: '1-3:1' },
        { id: '21', offset: 0, range: '7-7:1' },
        { id: '22', offset: 0, range: '9-12:1' },
      ],
      gone: { '21.7': 100 },
    }),
  })!;
  assert.equal(h.keys, 'task');
  assert.deepEqual(
    launchElements(h, [1, 2, 3, 7, 9, 10, 11, 12]).map((e) => `${e.job}.${e.index}=${e.tasks.join()}`),
    ['20.1=1', '20.2=2', '20.3=3', '21.7=7', '22.9=9', '22.10=10', '22.11=11', '22.12=12'],
  );
});

test('a launch of today: one array, elements 1..k are the tasks in id order', () => {
  const h = readHandles({
    handles: JSON.stringify({
      arrays: [{ id: '30', offset: 0, range: '1-4:1' }],
      tasksPerNode: 1,
      keys: 'index',
    }),
  })!;
  assert.deepEqual(
    launchElements(h, [3, 7, 9, 20]).map((e) => `${e.job}.${e.index}=${e.tasks.join()}`),
    ['30.1=3', '30.2=7', '30.3=9', '30.4=20'],
  );
});
