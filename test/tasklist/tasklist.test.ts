import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { DroverError } from '../../src/errors.js';
import { condenseIds, expandBlocks, parseBlocks, parseTasklist } from '../../src/tasklist/tasklist.js';

test('parses the grammar of docs/concepts.md and onager', () => {
  assert.deepEqual(parseTasklist('1-3:1,5,8-9', 100), [1, 2, 3, 5, 8, 9]);
  assert.deepEqual(
    parseTasklist('18-22:1,26,29,34-49:3,51', 100),
    [18, 19, 20, 21, 22, 26, 29, 34, 37, 40, 43, 46, 49, 51],
  );
  assert.deepEqual(parseTasklist('1-3,5-9,13', 100), [1, 2, 3, 5, 6, 7, 8, 9, 13]);
  assert.deepEqual(parseTasklist('5,1,5,2', 100), [1, 2, 5]);
  assert.deepEqual(parseTasklist(' 7 ', 100), [7]);
});

test('condenses ids into ranges and stepped runs', () => {
  assert.equal(condenseIds([1, 2, 3, 5, 8, 9]), '1-3,5,8-9');
  assert.equal(
    condenseIds([18, 19, 20, 21, 22, 26, 29, 34, 37, 40, 43, 46, 49, 51]),
    '18-22,26,29,34-49:3,51',
  );
  assert.equal(condenseIds([4]), '4');
  assert.equal(condenseIds([]), '');
  assert.equal(condenseIds([9, 3, 6]), '3-9:3');
});

for (const [bad, part] of [
  ['3-1', "'3-1'"],
  ['1-3:0', "'1-3:0'"],
  ['a-b', "'a-b'"],
  ['1,,2', 'an empty item'],
  ['', "empty tasklist ''"],
  ['0-4', "'0-4'"],
  ['1-3:', "'1-3:'"],
  ['-2', "'-2'"],
] as const) {
  test(`refuses ${JSON.stringify(bad)} naming the bad part`, () => {
    assert.throws(
      () => parseTasklist(bad, 100),
      (err: unknown) => err instanceof DroverError && err.exitCode === 2 && err.message.includes(part),
    );
  });
}

test('refuses ids the job does not have, naming them and the job size', () => {
  assert.throws(
    () => parseTasklist('1-3,9-12', 10, 'sweep'),
    (err: unknown) =>
      err instanceof DroverError && /task 11-12 .*job 'sweep' has tasks 1-10/.test(err.message),
  );
  assert.deepEqual(parseTasklist('1-3,9-10', 10), [1, 2, 3, 9, 10]);
});

const idSets = fc.uniqueArray(fc.integer({ min: 1, max: 400 }), { maxLength: 120 });

test('property: expanding a condensed list gives back the same ids', () => {
  fc.assert(
    fc.property(idSets, (ids) => {
      const sorted = [...ids].sort((a, b) => a - b);
      const text = condenseIds(ids);
      assert.deepEqual(text === '' ? [] : parseTasklist(text, 400), sorted);
    }),
  );
});

test('property: condense after expand is the identity on condensed text', () => {
  fc.assert(
    fc.property(idSets, (ids) => {
      const text = condenseIds(ids);
      if (text === '') return;
      assert.equal(condenseIds(expandBlocks(parseBlocks(text))), text);
    }),
  );
});

test('property: any written tasklist expands to the same ids as its condensed form', () => {
  const block = fc
    .tuple(fc.integer({ min: 1, max: 200 }), fc.integer({ min: 0, max: 60 }), fc.integer({ min: 1, max: 7 }))
    .map(([first, len, step]) => (len === 0 ? `${first}` : `${first}-${first + len}:${step}`));
  fc.assert(
    fc.property(fc.array(block, { minLength: 1, maxLength: 8 }), (blocks) => {
      const ids = parseTasklist(blocks.join(','), 300);
      assert.deepEqual(parseTasklist(condenseIds(ids), 300), ids);
    }),
  );
});

test('ids beyond the job are found from the blocks alone: huge ranges are refused without expanding', () => {
  const refused = (text: string, part: RegExp) =>
    assert.throws(
      () => parseTasklist(text, 10, 'j'),
      (err: unknown) => err instanceof DroverError && err.exitCode === 2 && part.test(err.message),
    );
  refused('1-1000000000', /names task 11-1000000000 but job 'j' has tasks 1-10/);
  refused('1-9007199254740991', /names task 11-9007199254740991 /);
  refused('1-99999999999999:3', /names task 13-99999999999997:3 /);
  refused('1-10,30', /names task 30 /);
  refused('12-1000:1000', /names task 12 /);
  refused('11,12,13,14,15', /names task 11,12,13,\.\.\. /);
  assert.throws(() => parseTasklist('1', 0, 'e'), /job 'e' has no tasks/);
});

test('overlapping and repeated ranges are merged before they are expanded', () => {
  assert.deepEqual(parseTasklist(Array(5000).fill('1-10').join(','), 10), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  assert.deepEqual(parseTasklist('1-1000000:2,2-1000000:2', 1_000_000).length, 1_000_000);
  // Every residue of every step from 2 to 19 names the whole job 18 times over: refused, not ground out.
  const items: string[] = [];
  for (let step = 2; step <= 19; step++) for (let r = 1; r <= step; r++) items.push(`${r}-1000000:${step}`);
  assert.throws(() => parseTasklist(items.join(','), 1_000_000), /names the same tasks over and over/);
});

test('property: resolving against a job gives exactly the ids the blocks name, sorted and unique', () => {
  const block = fc
    .tuple(fc.integer({ min: 1, max: 300 }), fc.integer({ min: 0, max: 120 }), fc.integer({ min: 1, max: 9 }))
    .map(([first, len, step]) => ({ first, last: first + len, step }));
  fc.assert(
    fc.property(
      fc.array(block, { minLength: 1, maxLength: 12 }),
      fc.integer({ min: 1, max: 450 }),
      (bs, max) => {
        const text = bs.map((b) => `${b.first}-${b.last}:${b.step}`).join(',');
        const want = expandBlocks(bs);
        if (want.some((id) => id > max)) {
          assert.throws(() => parseTasklist(text, max), /names task .* has tasks 1-/);
          return;
        }
        assert.deepEqual(parseTasklist(text, max), want);
      },
    ),
  );
});
