// onager's own prelaunch tests (camall3n/onager tests/test_prelaunch.py), ported: same inputs, same outputs.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  addTasks,
  expandSweep,
  nextTaskId,
  parsePrelaunchArgs,
  serializeJobfile,
} from '../../src/sweep/index.js';

/** Run one prelaunch line (split on spaces, as the Python tests do) over an existing jobfile. */
function run(line: string, existing = new Map<number, { command: string; tag: string }>()) {
  const spec = parsePrelaunchArgs(line.split(' '));
  const before = spec.append ? existing : new Map();
  const jobs = addTasks(before, expandSweep(spec, { startId: nextTaskId(before) }));
  const commands = new Map([...jobs].map(([id, e]) => [id, e.command]));
  const tags = new Map([...jobs].map(([id, e]) => [id, e.tag]));
  return { jobs, commands, tags };
}

const BASE = '+command echo +jobname testecho';

test('append: a second +a run continues at id 2', () => {
  const first = run(`${BASE} +arg --test hi +arg --test2 hi2 +q +tag`);
  assert.equal(first.commands.get(1), 'echo --test hi --test2 hi2 --tag testecho_1__test_hi__test2_hi2');
  const second = run(`${BASE} +arg --test hi +arg --test2 hi2 +q +a +tag`, first.jobs);
  assert.equal(second.jobs.size, 2);
  assert.equal(second.commands.get(2), 'echo --test hi --test2 hi2 --tag testecho_2__test_hi__test2_hi2');
});

test('no tagging: tag is the empty string', () => {
  const { tags, commands } = run(`${BASE} +arg --test hi +arg --test2 hi2 +q`);
  assert.equal(tags.get(1), '');
  assert.equal(commands.get(1), 'echo --test hi --test2 hi2');
});

test('default and custom tag option', () => {
  const plain = run(`${BASE} +arg --test hi +arg --test2 hi2 +q +tag`);
  assert.equal(plain.tags.get(1), 'testecho_1__test_hi__test2_hi2');
  const custom = run(`${BASE} +arg --test hi +arg --test2 hi2 +q +tag --custom_tag`);
  assert.equal(
    custom.commands.get(1),
    'echo --test hi --test2 hi2 --custom_tag testecho_1__test_hi__test2_hi2',
  );
  assert.equal(custom.tags.get(1), 'testecho_1__test_hi__test2_hi2');
});

test('tagging positional args', () => {
  const { commands, tags } = run(`${BASE} +pos-arg hi +pos-arg hi2 +q +tag`);
  assert.equal(commands.get(1), 'echo hi hi2 --tag testecho_1__hi__hi2');
  assert.equal(tags.get(1), 'testecho_1__hi__hi2');
});

test('tagging flags: on/off marks, the last flag varies slowest', () => {
  const { commands, tags } = run(`${BASE} +flag --hi +flag --hi2 +q +tag`);
  assert.deepEqual(
    [...commands.values()],
    [
      'echo --hi --hi2 --tag testecho_1__+hi__+hi2',
      'echo --hi2 --tag testecho_2__-hi__+hi2',
      'echo --hi --tag testecho_3__+hi__-hi2',
      'echo --tag testecho_4__-hi__-hi2',
    ],
  );
  assert.deepEqual(
    [...tags.values()],
    ['testecho_1__+hi__+hi2', 'testecho_2__-hi__+hi2', 'testecho_3__+hi__-hi2', 'testecho_4__-hi__-hi2'],
  );
});

test('tagging combined: positional, then args, then flags', () => {
  const { commands } = run(`${BASE} +arg --test hi +pos-arg hi2 +flag --help +q +tag`);
  assert.deepEqual(
    [...commands.values()],
    [
      'echo hi2 --test hi --help --tag testecho_1__hi2__test_hi__+help',
      'echo hi2 --test hi --tag testecho_2__hi2__test_hi__-help',
    ],
  );
});

test('flags without tags', () => {
  assert.deepEqual(
    [...run(`${BASE} +flag --hi +flag --hi2 +q`).commands.values()],
    ['echo --hi --hi2', 'echo --hi2', 'echo --hi', 'echo'],
  );
  assert.deepEqual([...run(`${BASE} +flag --hi +q`).commands.values()], ['echo --hi', 'echo']);
});

test('positional args: one slot, several slots, first slot varies fastest', () => {
  assert.deepEqual([...run(`${BASE} +q +pos-arg 0`).commands.values()], ['echo 0']);
  assert.deepEqual([...run(`${BASE} +q +pos-arg 0 1 2`).commands.values()], ['echo 0', 'echo 1', 'echo 2']);
  assert.deepEqual(
    [...run(`${BASE} +q +pos-arg 0 1 2 +pos-arg 3 4`).commands.values()],
    ['echo 0 3', 'echo 1 3', 'echo 2 3', 'echo 0 4', 'echo 1 4', 'echo 2 4'],
  );
});

test('optional args with one and several values', () => {
  assert.equal(
    run(`${BASE} +arg --test hi +q +tag`).commands.get(1),
    'echo --test hi --tag testecho_1__test_hi',
  );
  assert.deepEqual(
    [...run(`${BASE} +arg --test hi bye +q +tag`).commands.values()],
    ['echo --test hi --tag testecho_1__test_hi', 'echo --test bye --tag testecho_2__test_bye'],
  );
});

test('+no-tag-number and zero-padded tag numbers', () => {
  assert.equal(
    run(`${BASE} +arg --test hi +q +tag +no-tag-number`).commands.get(1),
    'echo --test hi --tag testecho__test_hi',
  );
  const padded = run(`${BASE} +arg --value 1 2 3 4 5 6 7 8 9 10 +q +tag`);
  assert.equal(padded.commands.get(1), 'echo --value 1 --tag testecho_01__value_1');
  assert.equal(padded.commands.get(10), 'echo --value 10 --tag testecho_10__value_10');
});

test('flag jobfile bytes match Python json.dump', () => {
  const { jobs } = run(`${BASE} +flag --hi +flag --hi2 +q +tag`);
  const two = new Map([...jobs].slice(0, 2));
  assert.equal(
    serializeJobfile(two),
    '{"1": ["echo --hi --hi2 --tag testecho_1__+hi__+hi2", "testecho_1__+hi__+hi2"], ' +
      '"2": ["echo --hi2 --tag testecho_2__-hi__+hi2", "testecho_2__-hi__+hi2"]}',
  );
});
