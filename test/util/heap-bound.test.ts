import assert from 'node:assert/strict';
import { test } from 'node:test';
import v8 from 'node:v8';
import { heapBoundState, holdHeapBound } from '../../src/util/heap-bound.js';

const MB = 1024 * 1024;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Garbage of the kind a runner makes: each chunk lives long enough to be promoted (a ring of the last 40), then
 * dies. `ms` of it, ~25 MB a second; returns the largest used heap seen between chunks.
 */
async function promotedGarbage(ms: number): Promise<number> {
  const ring: number[][] = [];
  let peak = 0;
  const end = Date.now() + ms;
  for (let i = 0; Date.now() < end; i++) {
    ring.push(new Array(32 * 1024).fill(i)); // 256 KB
    if (ring.length > 40) ring.shift();
    peak = Math.max(peak, v8.getHeapStatistics().used_heap_size);
    await sleep(10);
  }
  return peak;
}

test('while held, the heap is collected whenever it grows 12 MB past its low; the last release stops the checks', async () => {
  assert.deepEqual(heapBoundState(), { holders: 0, checking: false, collections: 0 });
  const before = v8.getHeapStatistics().used_heap_size;
  const first = holdHeapBound();
  const second = holdHeapBound();
  assert.equal(heapBoundState().holders, 2);
  assert.ok(heapBoundState().checking);
  const peak = await promotedGarbage(4000);
  const made = heapBoundState().collections;
  assert.ok(made > 0, 'the bound collected');
  // Live: the ring (10 MB) on top of what was there. A collection comes within 500 ms of passing the slack, in
  // which ~13 MB more is made: V8 on its own lets several times the live heap pile up.
  assert.ok(peak - before < 50 * MB, `used heap rose ${((peak - before) / MB).toFixed(1)} MB`);
  first();
  first(); // a second release by the same holder changes nothing
  assert.equal(heapBoundState().holders, 1);
  assert.ok(heapBoundState().checking, 'the other holder still holds it');
  second();
  assert.deepEqual(heapBoundState(), { holders: 0, checking: false, collections: made });
  await promotedGarbage(1500);
  assert.equal(heapBoundState().collections, made, 'no collection once nobody holds the bound');
});
