import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { DEFAULT_BACKOFF, retryDelay } from '../../src/runner/backoff.js';

const middle = () => 0.5; // no jitter

test('the delay doubles from the base each retry, up to the cap', () => {
  const b = { base: 1, max: 60, jitter: 0.2 };
  assert.deepEqual(
    [1, 2, 3, 4, 5, 6, 7, 20].map((n) => retryDelay(n, b, middle)),
    [1, 2, 4, 8, 16, 32, 60, 60],
  );
  assert.equal(retryDelay(1, { base: 2.5, max: 60, jitter: 0 }), 2.5);
});

test('base 0 retries at once, whatever the jitter', () => {
  for (const r of [0, 0.3, 0.999])
    assert.equal(
      retryDelay(3, { ...DEFAULT_BACKOFF, base: 0 }, () => r),
      0,
    );
});

test('jitter spreads the delay by at most ±jitter and never beyond the cap or below 0', () => {
  const b = { base: 4, max: 60, jitter: 0.2 };
  assert.equal(
    retryDelay(1, b, () => 0),
    3.2,
  );
  assert.ok(Math.abs(retryDelay(1, b, () => 1) - 4.8) < 1e-9);
  assert.equal(
    retryDelay(10, b, () => 1),
    60,
    'capped even with positive jitter',
  );
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 30 }),
      fc.double({ min: 0, max: 100, noNaN: true }),
      fc.double({ min: 0, max: 1, noNaN: true }),
      fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
      (n, base, jitter, r) => {
        const b2 = { base, max: 60, jitter };
        const d = retryDelay(n, b2, () => r);
        const raw = Math.min(60, base * 2 ** (n - 1));
        assert.ok(d >= 0 && d <= 60, `${d}`);
        assert.ok(d >= raw * (1 - jitter) - 1e-9 && d <= raw * (1 + jitter) + 1e-9, `${d} vs ${raw}`);
      },
    ),
  );
});

test('the default waits about a second before the first retry', () => {
  assert.equal(retryDelay(1, DEFAULT_BACKOFF, middle), 1);
  for (let i = 0; i < 50; i++) {
    const d = retryDelay(1);
    assert.ok(d >= 0.8 && d <= 1.2, `${d}`);
  }
});
