// Expansion cases derived from onager's meta_launcher.py (hydra, tag-args, keynames, append numbering).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  type ExpandOptions,
  expandSweep,
  nextTaskId,
  parsePrelaunchArgs,
  tagKeyName,
  unknownTagArgs,
} from '../../src/sweep/index.js';

function sweep(argv: string[], options?: ExpandOptions) {
  return expandSweep(parsePrelaunchArgs(['+jobname', 'j', '+command', 'run', ...argv]), options);
}
const commands = (argv: string[], options?: ExpandOptions) => sweep(argv, options).map((t) => t.command);
const tags = (argv: string[], options?: ExpandOptions) => sweep(argv, options).map((t) => t.tag);

test('hydra mode joins name=value, also for the tag; keynames turn / into .', () => {
  const argv = '+arg-mode hydra +arg model.lr 0.1 0.01 +arg optimizer/name adam +tag'.split(' ');
  assert.deepEqual(commands(argv), [
    'run model.lr=0.1 optimizer/name=adam --tag=j_1__model.lr_0.1__optimizer.name_adam',
    'run model.lr=0.01 optimizer/name=adam --tag=j_2__model.lr_0.01__optimizer.name_adam',
  ]);
});

test('hydra mode: positional values stay space-separated, flags toggle', () => {
  const argv = '+arg-mode hydra +pos-arg train +arg seed 1 +flag debug=true +tag run.tag'.split(' ');
  assert.deepEqual(commands(argv), [
    'run train seed=1 debug=true run.tag=j_1__train__seed_1__+debug=true',
    'run train seed=1 run.tag=j_2__train__seed_1__-debug=true',
  ]);
});

test('tag keynames: _ and - dropped, = becomes _, / becomes .; flag marks drop - and + only', () => {
  assert.equal(tagKeyName('--batch_size'), 'batchsize');
  assert.equal(tagKeyName('--learning-rate'), 'learningrate');
  assert.equal(tagKeyName('env=cart/pole'), 'env_cart.pole');
  assert.deepEqual(tags('+flag --no_cuda +flag --dry-run +tag'.split(' ')), [
    'j_1__+no_cuda__+dryrun',
    'j_2__-no_cuda__+dryrun',
    'j_3__+no_cuda__-dryrun',
    'j_4__-no_cuda__-dryrun',
  ]);
});

test('+tag-args keeps only the named args in the tag; the commands still get every arg', () => {
  const argv = '+arg --lr 0.1 0.2 +arg --seed 1 2 +tag +tag-args --seed'.split(' ');
  assert.deepEqual(tags(argv), ['j_1__seed_1', 'j_2__seed_1', 'j_3__seed_2', 'j_4__seed_2']);
  assert.equal(commands(argv)[3], 'run --lr 0.2 --seed 2 --tag j_4__seed_2');
});

test('unknownTagArgs lists +tag-args names that are not +arg names (onager only warns)', () => {
  const spec = parsePrelaunchArgs(
    '+jobname j +command run +arg --lr 1 +tag +tag-args --lr --nope'.split(' '),
  );
  assert.deepEqual(unknownTagArgs(spec), ['--nope']);
  assert.deepEqual(unknownTagArgs({ args: [], tagArgs: undefined }), []);
  assert.deepEqual(
    expandSweep(spec).map((t) => t.tag),
    ['j_1__lr_1'],
  );
});

test('an +arg with no values is always passed and tagged by name only', () => {
  assert.deepEqual(commands('+arg --verbose +arg --lr 1 2 +tag'.split(' ')), [
    'run --verbose --lr 1 --tag j_1__verbose__lr_1',
    'run --verbose --lr 2 --tag j_2__verbose__lr_2',
  ]);
});

test('deviation: a value-less +arg left out of +tag-args keeps the tasks (onager drops them all)', () => {
  assert.deepEqual(commands('+arg --verbose +arg --lr 1 2 +tag +tag-args --lr'.split(' ')), [
    'run --verbose --lr 1 --tag j_1__lr_1',
    'run --verbose --lr 2 --tag j_2__lr_2',
  ]);
});

test('a repeated +arg name keeps its first place and its last values, like a Python dict', () => {
  assert.deepEqual(commands('+arg --a 1 +arg --b 2 +arg --a 3 4'.split(' ')), [
    'run --a 3 --b 2',
    'run --a 4 --b 2',
  ]);
});

test('no axes: one task; +tag alone gives <jobname>_1, +no-tag-number gives <jobname>', () => {
  assert.deepEqual(sweep([]), [{ id: 1, command: 'run', tag: '', params: {} }]);
  assert.deepEqual(sweep(['+tag']), [{ id: 1, command: 'run --tag j_1', tag: 'j_1', params: {} }]);
  assert.deepEqual(sweep(['+tag', '+no-tag-number']), [
    { id: 1, command: 'run --tag j', tag: 'j', params: {} },
  ]);
});

test('append numbering: ids continue at startId, padding is the width of the last new id', () => {
  assert.deepEqual(tags('+pos-arg a b c +tag'.split(' '), { startId: 10 }), [
    'j_10__a',
    'j_11__b',
    'j_12__c',
  ]);
  const ten = '+pos-arg 0 1 2 3 4 5 6 7 8 9 +tag'.split(' ');
  assert.deepEqual(tags(ten, { startId: 6 }).slice(0, 2), ['j_06__0', 'j_07__1']);
  assert.equal(tags(ten, { startId: 6 })[9], 'j_15__9');
  assert.deepEqual(tags('+pos-arg x y z +tag'.split(' '), { startId: 98 }), [
    'j_098__x',
    'j_099__y',
    'j_100__z',
  ]);
  assert.deepEqual(
    sweep('+pos-arg x y +tag +no-tag-number'.split(' '), { startId: 5 }).map((t) => [t.id, t.tag]),
    [
      [5, 'j__x'],
      [6, 'j__y'],
    ],
  );
});

test('nextTaskId continues after the highest existing id, or starts at 1', () => {
  assert.equal(nextTaskId(new Map()), 1);
  const entry = { command: 'c', tag: '' };
  assert.equal(
    nextTaskId(
      new Map([
        [1, entry],
        [5, entry],
        [3, entry],
      ]),
    ),
    6,
  );
});

test('deviation: braces in the command are kept verbatim (onager str.format crashes or eats them)', () => {
  const spec = parsePrelaunchArgs([
    '+jobname',
    'j',
    '+command',
    "awk '{print}'",
    '+pos-arg',
    'f{1}',
    '+flag',
    '{}',
  ]);
  assert.deepEqual(
    expandSweep(spec).map((t) => t.command),
    ["awk '{print}' f{1} {}", "awk '{print}' f{1}"],
  );
});

test('a large grid keeps onager order: earlier axes vary fastest', () => {
  const tasks = sweep('+arg --a 1 2 3 +arg --b x y +pos-arg p q +tag'.split(' '));
  assert.equal(tasks.length, 12);
  assert.equal(tasks[0]?.command, 'run p --a 1 --b x --tag j_01__p__a_1__b_x');
  assert.equal(tasks[1]?.command, 'run q --a 1 --b x --tag j_02__q__a_1__b_x');
  assert.equal(tasks[2]?.command, 'run p --a 2 --b x --tag j_03__p__a_2__b_x');
  assert.equal(tasks[11]?.command, 'run q --a 3 --b y --tag j_12__q__a_3__b_y');
});
