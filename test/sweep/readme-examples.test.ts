// Every prelaunch example in onager's README (camall3n/onager README.md), reproduced byte for byte.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addTasks, expandSweep, parsePrelaunchArgs, serializeJobfile } from '../../src/sweep/index.js';

function prelaunch(argv: string[]) {
  return expandSweep(parsePrelaunchArgs(argv));
}

/** The jobfile onager writes for these (command, tag) pairs, numbered from 1. */
function onagerJobfile(rows: Array<[string, string]>): string {
  return `{${rows.map(([c, t], i) => `"${i + 1}": ["${c}", "${t}"]`).join(', ')}}`;
}

const range = (from: number, to: number, width = 0) =>
  Array.from({ length: to - from + 1 }, (_, i) => String(from + i).padStart(width, '0'));

test('README Prelaunch: learningrate x batchsize with +tag --mytag', () => {
  const argv =
    '+jobname experiment1 +command myscript +arg --learningrate 0.1 0.01 0.001 +arg --batchsize 32 64 128 +tag --mytag';
  const expected = [
    'myscript --learningrate 0.1 --batchsize 32 --mytag experiment1_1__learningrate_0.1__batchsize_32',
    'myscript --learningrate 0.01 --batchsize 32 --mytag experiment1_2__learningrate_0.01__batchsize_32',
    'myscript --learningrate 0.001 --batchsize 32 --mytag experiment1_3__learningrate_0.001__batchsize_32',
    'myscript --learningrate 0.1 --batchsize 64 --mytag experiment1_4__learningrate_0.1__batchsize_64',
    'myscript --learningrate 0.01 --batchsize 64 --mytag experiment1_5__learningrate_0.01__batchsize_64',
    'myscript --learningrate 0.001 --batchsize 64 --mytag experiment1_6__learningrate_0.001__batchsize_64',
    'myscript --learningrate 0.1 --batchsize 128 --mytag experiment1_7__learningrate_0.1__batchsize_128',
    'myscript --learningrate 0.01 --batchsize 128 --mytag experiment1_8__learningrate_0.01__batchsize_128',
    'myscript --learningrate 0.001 --batchsize 128 --mytag experiment1_9__learningrate_0.001__batchsize_128',
  ];
  const tasks = prelaunch(argv.split(' '));
  assert.deepEqual(
    tasks.map((t) => t.command),
    expected,
  );
  // README `onager list` shows the same tags, ids 1..9.
  assert.deepEqual(
    tasks.map((t) => t.tag),
    expected.map((c) => c.split(' ').at(-1)),
  );
  assert.deepEqual(
    tasks.map((t) => t.id),
    range(1, 9).map(Number),
  );
  const text = serializeJobfile(addTasks(new Map(), tasks));
  assert.equal(text, onagerJobfile(expected.map((c) => [c, c.split(' ').at(-1) ?? ''])));
  assert.ok(
    text.startsWith(
      '{"1": ["myscript --learningrate 0.1 --batchsize 32 --mytag experiment1_1__learningrate_0.1__batchsize_32", ' +
        '"experiment1_1__learningrate_0.1__batchsize_32"], "2": ["myscript',
    ),
  );
  assert.ok(text.endsWith('"experiment1_9__learningrate_0.001__batchsize_128"]}'));
});

test('README MNIST: 18 runs, two-digit zero-padded tags, --batch-size becomes batchsize', () => {
  const argv = [
    '+command',
    'python mnist.py --epochs 1 --gamma 0.7 --no-cuda',
    ...'+jobname mnist_lr_bs +arg --lr 0.3 1.0 3.0 +arg --batch-size 32 64 +arg --seed 0 1 2 +tag --run-tag'.split(
      ' ',
    ),
  ];
  const base = 'python mnist.py --epochs 1 --gamma 0.7 --no-cuda';
  const expected: string[] = [];
  let n = 1;
  for (const seed of ['0', '1', '2']) {
    for (const bs of ['32', '64']) {
      for (const lr of ['0.3', '1.0', '3.0']) {
        const tag = `mnist_lr_bs_${String(n++).padStart(2, '0')}__lr_${lr}__batchsize_${bs}__seed_${seed}`;
        expected.push(`${base} --lr ${lr} --batch-size ${bs} --seed ${seed} --run-tag ${tag}`);
      }
    }
  }
  const tasks = prelaunch(argv);
  assert.deepEqual(
    tasks.map((t) => t.command),
    expected,
  );
  assert.equal(
    tasks[0]?.command,
    'python mnist.py --epochs 1 --gamma 0.7 --no-cuda --lr 0.3 --batch-size 32 --seed 0 --run-tag mnist_lr_bs_01__lr_0.3__batchsize_32__seed_0',
  );
  assert.equal(
    tasks[17]?.command,
    'python mnist.py --epochs 1 --gamma 0.7 --no-cuda --lr 3.0 --batch-size 64 --seed 2 --run-tag mnist_lr_bs_18__lr_3.0__batchsize_64__seed_2',
  );
  assert.equal(
    serializeJobfile(addTasks(new Map(), tasks)),
    onagerJobfile(expected.map((c) => [c, c.split(' ').at(-1) ?? ''])),
  );
});

test('README Eqw example: +pos-arg {0001..1000} +tag gives 4-digit numbers and the value in the tag', () => {
  const tasks = prelaunch([
    '+command',
    './myscript',
    '+pos-arg',
    ...range(1, 1000, 4),
    '+tag',
    '+jobname',
    'test-eqw',
  ]);
  assert.equal(tasks.length, 1000);
  assert.deepEqual(tasks[0], {
    id: 1,
    command: './myscript 0001 --tag test-eqw_0001__0001',
    tag: 'test-eqw_0001__0001',
    params: { pos1: '0001' },
  });
  assert.deepEqual(tasks[999], {
    id: 1000,
    command: './myscript 1000 --tag test-eqw_1000__1000',
    tag: 'test-eqw_1000__1000',
    params: { pos1: '1000' },
  });
});

test('README local example: +pos-arg {1..10} +tag pads to two digits', () => {
  const tasks = prelaunch([
    '+jobname',
    'experiment1',
    '+command',
    './myscript',
    '+pos-arg',
    ...range(1, 10),
    '+tag',
  ]);
  assert.deepEqual(
    tasks.map((t) => t.command),
    range(1, 10).map((v, i) => `./myscript ${v} --tag experiment1_${String(i + 1).padStart(2, '0')}__${v}`),
  );
  assert.equal(tasks[9]?.tag, 'experiment1_10__10');
});
