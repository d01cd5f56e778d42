import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { bestRow, fieldAndMode, flattenResult, numberOf, sortRows } from '../../src/launch/result-table.js';
import type { TaskResult } from '../../src/launch/results.js';

/** The choices on a results table (`--sort`, `--best`) as properties over plain rows: no process, no file. */

const value = fc.oneof(
  fc.double({ noNaN: false }),
  fc.integer(),
  fc.string({ maxLength: 5 }),
  fc.constant(null),
  fc.constant(undefined),
  fc.boolean(),
);
const rows = fc.uniqueArray(fc.record({ id: fc.integer({ min: 1, max: 10_000 }), v: value }), {
  selector: (r) => r.id,
  maxLength: 30,
});

function taskRow(id: number, v: unknown): { task: TaskResult; v: unknown } {
  return { task: { task: id, state: 'succeeded', tag: '', params: {}, duration_s: null, result: null }, v };
}

test('sortRows: a permutation; numbers first in order, then text, then none; ties by task id', () => {
  fc.assert(
    fc.property(rows, fc.boolean(), (rs, desc) => {
      const input = rs.map((r) => taskRow(r.id, r.v));
      const out = sortRows(input, (r) => r.v, desc);
      assert.deepEqual(
        out.map((r) => r.task.task).sort((a, b) => a - b),
        input.map((r) => r.task.task).sort((a, b) => a - b),
      );
      const rank = (v: unknown) => (numberOf(v) !== undefined ? 0 : v === undefined || v === null ? 2 : 1);
      for (let i = 1; i < out.length; i++) {
        const [a, b] = [out[i - 1]!, out[i]!];
        assert.ok(rank(a.v) <= rank(b.v), 'numbers, then text, then rows without a value');
        if (rank(a.v) === 0 && rank(b.v) === 0) {
          const c = numberOf(a.v)! - numberOf(b.v)!;
          assert.ok(desc ? c >= 0 : c <= 0, `${a.v} then ${b.v}`);
          if (c === 0) assert.ok(a.task.task < b.task.task, 'ties by task id');
        }
      }
    }),
  );
});

test('bestRow: the least (or greatest) finite number, the lowest task id among equals; none without numbers', () => {
  fc.assert(
    fc.property(rows, fc.boolean(), (rs, max) => {
      const input = rs.map((r) => taskRow(r.id, r.v));
      const best = bestRow(input, (r) => r.v, max);
      const numbers = input.filter((r) => numberOf(r.v) !== undefined);
      if (numbers.length === 0) return assert.equal(best, undefined);
      const values = numbers.map((r) => numberOf(r.v)!);
      const want = max ? Math.max(...values) : Math.min(...values);
      const lowest = Math.min(...numbers.filter((r) => numberOf(r.v) === want).map((r) => r.task.task));
      assert.deepEqual([numberOf(best!.v), best!.task.task], [want, lowest]);
    }),
  );
});

test('flattenResult: every leaf once, under its dotted path; objects are never values', () => {
  const leaf = fc.oneof(
    fc.double(),
    fc.string({ maxLength: 4 }),
    fc.boolean(),
    fc.constant(null),
    fc.array(fc.integer(), { maxLength: 3 }),
  );
  const key = fc.stringMatching(/^[a-z]{1,3}$/);
  const tree = fc.letrec((tie) => ({
    node: fc.dictionary(key, fc.oneof({ depthSize: 'small' }, leaf, tie('node')), { maxKeys: 4 }),
  })).node as fc.Arbitrary<Record<string, unknown>>;
  fc.assert(
    fc.property(tree, (result) => {
      const flat = flattenResult(result as never);
      const leaves: [string, unknown][] = [];
      const walk = (v: unknown, p: string) => {
        if (typeof v === 'object' && v !== null && !Array.isArray(v))
          for (const [k, x] of Object.entries(v)) walk(x, p === '' ? k : `${p}.${k}`);
        else leaves.push([p, v]);
      };
      walk(result, '');
      // Distinct keys of one level cannot collide here (no dots in keys): each leaf is its own entry.
      assert.deepEqual([...flat.entries()], leaves);
      for (const v of flat.values()) assert.ok(typeof v !== 'object' || v === null || Array.isArray(v));
    }),
  );
});

test('fieldAndMode: a known suffix is the mode, any other colon belongs to the field', () => {
  assert.deepEqual(fieldAndMode('loss', ['min', 'max']), ['loss', 'min']);
  assert.deepEqual(fieldAndMode('acc:max', ['min', 'max']), ['acc', 'max']);
  assert.deepEqual(fieldAndMode('a:b', ['min', 'max']), ['a:b', 'min']);
  assert.deepEqual(fieldAndMode('a:b:min', ['min', 'max']), ['a:b', 'min']);
  assert.deepEqual(fieldAndMode(':max', ['min', 'max']), ['', 'max']);
});
