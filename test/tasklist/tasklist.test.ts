import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { DroverError } from '../../src/errors.js';
import { condenseIds, expandBlocks, parseBlocks, parseTasklist } from '../../src/tasklist/tasklist.js';

test('parses the grammar of DESIGN.md and onager', () => {
  assert.deepEqual(parseTasklist('1-3:1,5,8-9'), [1, 2, 3, 5, 8, 9]);
  assert.deepEqual(
    parseTasklist('18-22:1,26,29,34-49:3,51'),
    [18, 19, 20, 21, 22, 26, 29, 34, 37, 40, 43, 46, 49, 51],
  );
  assert.deepEqual(parseTasklist('1-3,5-9,13'), [1, 2, 3, 5, 6, 7, 8, 9, 13]);
  assert.deepEqual(parseTasklist('5,1,5,2'), [1, 2, 5]);
  assert.deepEqual(parseTasklist(' 7 '), [7]);
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
      () => parseTasklist(bad),
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
      assert.deepEqual(text === '' ? [] : parseTasklist(text), sorted);
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
      const ids = parseTasklist(blocks.join(','));
      assert.deepEqual(parseTasklist(condenseIds(ids)), ids);
    }),
  );
});
