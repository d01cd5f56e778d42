import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { spreadOf } from '../../src/ledger/durations.js';

test('spreadOf: nothing finished is all nulls; one value is every field', () => {
  assert.deepEqual(spreadOf([]), { min: null, median: null, p95: null, max: null });
  assert.deepEqual(spreadOf([2.5]), { min: 2.5, median: 2.5, p95: 2.5, max: 2.5 });
});

test('spreadOf: median of an even count is the mean of the middle two; p95 is the nearest rank', () => {
  assert.deepEqual(spreadOf([1, 2, 3, 10]), { min: 1, median: 2.5, p95: 10, max: 10 });
  const hundred = Array.from({ length: 100 }, (_, i) => i + 1);
  assert.deepEqual(spreadOf(hundred), { min: 1, median: 50.5, p95: 95, max: 100 });
  const twenty = Array.from({ length: 20 }, (_, i) => i + 1);
  assert.equal(spreadOf(twenty).p95, 19);
});

test('spreadOf: min ≤ median ≤ p95 ≤ max, each one of the values or between two, for any sorted durations', () => {
  fc.assert(
    fc.property(fc.array(fc.double({ min: 0, max: 1e6, noNaN: true }), { minLength: 1 }), (xs) => {
      const d = [...xs].sort((a, b) => a - b);
      const s = spreadOf(d);
      assert.ok(s.min! <= s.median! && s.median! <= s.p95! && s.p95! <= s.max!);
      assert.equal(s.min, d[0]);
      assert.equal(s.max, d.at(-1));
      assert.ok(d.includes(s.p95!));
      // At least 95% of the values are at or below p95, and fewer than 95% below it.
      assert.ok(d.filter((x) => x <= s.p95!).length >= 0.95 * d.length);
      assert.ok(d.filter((x) => x < s.p95!).length < 0.95 * d.length);
    }),
  );
});
