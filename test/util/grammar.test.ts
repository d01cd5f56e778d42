import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { DroverError } from '../../src/errors.js';
import { parseDuration } from '../../src/util/duration.js';
import { parseInteger } from '../../src/util/integer.js';
import { COUNTS, describeRange, formatSeconds, MEMORY_MIB, SECONDS } from '../../src/util/limits.js';
import { quoted } from '../../src/util/quote.js';
import { formatSize, parseSize } from '../../src/util/size.js';
import { refuses } from '../helpers/refuses.js';

const tasks = COUNTS.tasks;

test('whole numbers: ASCII digits within the range, anything else refused naming value and range', () => {
  assert.equal(parseInteger('7', '--n', tasks), 7);
  assert.equal(parseInteger(' 007 ', '--n', tasks), 7);
  assert.equal(parseInteger('10000000', '--n', tasks), 10_000_000);
  assert.equal(parseInteger('0', '--g', COUNTS.gpus), 0);
  for (const bad of ['', ' ', '1e3', '0x10', '-1', '+1', '2.5', '1_000', '٣', '５', 'NaN', 'Infinity', '1 2'])
    refuses(
      () => parseInteger(bad, '--n', tasks),
      /--n '.*' is not a whole number: give one from 1 to 10000000/,
    );
  for (const over of [
    '0',
    '10000001',
    '5000000000',
    '99999999999999999999',
    '9'.repeat(400),
    '18446744073709551617',
  ])
    refuses(
      () => parseInteger(over, '--n', tasks),
      /--n '.*' is out of range: give a whole number from 1 to 10000000/,
    );
});

test('durations: units, clocks as Slurm writes them, and each field in its range', () => {
  const d = (t: string) => parseDuration(t, '--d', SECONDS.limit);
  assert.equal(d('90'), 90);
  assert.equal(d('90s'), 90);
  assert.equal(d('1.5m'), 90);
  assert.equal(d('2h'), 7200);
  assert.equal(d('25d'), 25 * 86400);
  assert.equal(d('1:30'), 90);
  assert.equal(d('90:00'), 5400);
  assert.equal(d('1:00:00'), 3600);
  assert.equal(d('48:00:00'), 48 * 3600);
  assert.equal(d('2-12'), 2 * 86400 + 12 * 3600);
  assert.equal(d('1-10:00'), 86400 + 10 * 3600);
  assert.equal(d('1-00:00:01'), 86401);
  assert.equal(d(' 0.5 '), 0.5);
  for (const bad of [
    '',
    '1:99:99',
    '99:60',
    '1:60:00',
    '1-24:00:00',
    '1-00:60',
    'x',
    '1e3',
    '0x10',
    '-5',
    '.5',
    '5.',
    '1h30m',
    '10M',
    '1:2:3:4',
    '1--2',
    '٣s',
  ])
    refuses(() => d(bad), /--d '.*' is not a duration: write e\.g\. 90s/);
  for (const over of ['0', '0s', '0:00', '366d', '9'.repeat(400), '0.0001'])
    refuses(() => d(over), /--d '.*' is out of range: give a duration from 0\.001s to 365d/);
  assert.equal(parseDuration('0', '--kill-grace', SECONDS.killGrace), 0);
  refuses(() => parseDuration('99999999999', '--kill-grace', SECONDS.killGrace), /from 0s to 1h/);
});

test('sizes: binary units with optional B or iB in any case, a bare number is G, within 1M to 1P', () => {
  const s = (t: string) => parseSize(t, '--mem');
  for (const t of ['4G', '4g', '4GB', '4gb', '4GiB', '4gib', '4', '4096M', '4194304K', '4.0G'])
    assert.equal(s(t), 4096, t);
  assert.equal(s('1.5G'), 1536);
  assert.equal(s('500M'), 500);
  assert.equal(s('1025K'), 2, 'rounded up to whole MiB');
  assert.equal(s('1024K'), 1);
  assert.equal(s('1P'), 2 ** 30);
  assert.equal(s('2T'), 2 * 1024 ** 2);
  for (const bad of ['', '5Q', '-5G', '4 GB', '4B', '1e3G', '0x10G', 'G', '.5G', 'lots', '4GiBB', '٤G'])
    refuses(() => s(bad), /--mem '.*' is not a memory size/);
  for (const over of ['0', '0G', '1K', '0.5K', '1023K', '0.5M', '1.1P', '2P', '9'.repeat(400)])
    refuses(() => s(over), /--mem '.*' is out of range: give a size from 1M to 1P/);
});

test('property: sizes and durations read back from their canonical text', () => {
  fc.assert(
    fc.property(fc.integer({ min: MEMORY_MIB.min, max: MEMORY_MIB.max }), (mib) => {
      assert.equal(parseSize(formatSize(mib), '--mem'), mib);
      assert.equal(parseSize(formatSize(mib, 'G'), '--mem'), mib);
    }),
  );
  fc.assert(
    fc.property(fc.integer({ min: 1, max: SECONDS.limit.max }), (secs) => {
      assert.equal(parseDuration(formatSeconds(secs), '--d', SECONDS.limit), secs);
    }),
  );
});

test('property: no text makes a parser throw anything but a one-line usage error, or return out of range', () => {
  const hostile = fc.oneof(
    fc.string(),
    fc.string({ unit: 'grapheme' }),
    fc.stringMatching(/^[0-9.:eExX+\-dhmsKMGTPiB ]{0,24}$/),
    fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String),
    fc.double().map(String),
  );
  const check = (fn: () => number, min: number, max: number) => {
    try {
      const v = fn();
      assert.ok(Number.isFinite(v) && v >= min && v <= max, `returned ${v}`);
    } catch (err) {
      assert.ok(err instanceof DroverError && err.exitCode === 2, String(err));
      assert.ok(!/[\n\r]/.test(err.message), 'one line');
    }
  };
  fc.assert(
    fc.property(hostile, (t) => {
      check(() => parseInteger(t, '--n', tasks), tasks.min, tasks.max);
      check(() => parseDuration(t, '--d', SECONDS.limit), SECONDS.limit.min, SECONDS.limit.max);
      check(() => parseSize(t, '--mem'), MEMORY_MIB.min, MEMORY_MIB.max);
    }),
    { numRuns: 2000 },
  );
});

test('ranges read as people type them; values in messages stay on one line and short', () => {
  assert.equal(describeRange(COUNTS.tasks), '1 to 10000000');
  assert.equal(describeRange(SECONDS.killGrace), '0s to 1h');
  assert.equal(describeRange(SECONDS.retryDelay), '0s to 1m');
  assert.equal(describeRange(SECONDS.limit), '0.001s to 365d');
  assert.equal(quoted('a\nb\u001b'), "'a\\nb\\u001b'");
  assert.equal(quoted('x'.repeat(500)).length, 82);
});
