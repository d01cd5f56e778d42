import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NODE_TIMER_LIMIT_MS, setLongTimeout } from '../../src/util/long-timer.js';

test('a delay longer than one step waits through several steps, then fires once', async () => {
  const t0 = performance.now();
  const fired = await new Promise<number>((resolve) => {
    setLongTimeout(() => resolve(performance.now() - t0), 120, 25);
  });
  // Not after its first 25 ms step; timers may fire a millisecond early by the clock read here.
  assert.ok(fired >= 110, `fired after ${fired} ms, asked 120`);
});

test('past Node’s limit (2^31 ms, 24.8 days) it does not fire at once, and clear() stops it', async () => {
  let fired = false;
  const t = setLongTimeout(() => {
    fired = true;
  }, NODE_TIMER_LIMIT_MS + 1000);
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(fired, false, 'a 25-day timer fired within 50 ms');
  t.clear();
  const never = setLongTimeout(() => {
    fired = true;
  }, Number.POSITIVE_INFINITY);
  await new Promise((r) => setTimeout(r, 20));
  never.clear();
  assert.equal(fired, false);
  const gone = setLongTimeout(
    () => {
      fired = true;
    },
    10,
    3,
  );
  gone.clear();
  await new Promise((r) => setTimeout(r, 40));
  assert.equal(fired, false, 'cleared in its first step');
});

test('a bad delay is a bug, not a timer that fires at once', () => {
  assert.throws(() => setLongTimeout(() => {}, Number.NaN), RangeError);
  assert.throws(() => setLongTimeout(() => {}, -1), RangeError);
});
