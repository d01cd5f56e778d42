import assert from 'node:assert/strict';
import { test } from 'node:test';
import { idsAfter } from '../../src/ledger/transitions.js';
import { parseBlocks } from '../../src/tasklist/tasklist.js';

test('idsAfter walks a tasklist in chunks, in order, without expanding it all', () => {
  const blocks = parseBlocks('1-3,5,8-20:4');
  assert.deepEqual(idsAfter(blocks, 0, 100), [1, 2, 3, 5, 8, 12, 16, 20]);
  assert.deepEqual(idsAfter(blocks, 2, 3), [3, 5, 8]);
  assert.deepEqual(idsAfter(blocks, 8, 100), [12, 16, 20]);
  assert.deepEqual(idsAfter(blocks, 9, 1), [12]);
  assert.deepEqual(idsAfter(blocks, 20, 10), []);
  assert.deepEqual(idsAfter(parseBlocks('1-100000'), 99_998, 10), [99_999, 100_000]);
});
