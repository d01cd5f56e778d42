import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { DroverError } from '../../src/errors.js';
import {
  addTasks,
  DEFAULT_JOBFILE,
  expandSweep,
  type JobEntry,
  jobfilePath,
  nextTaskId,
  parsePrelaunchArgs,
  readJobfile,
  serializeJobfile,
  writeJobfileAtomic,
} from '../../src/sweep/index.js';

const root = mkdtempSync(join(tmpdir(), 'drover-jobfile-'));
after(() => rmSync(root, { recursive: true, force: true }));
let counter = 0;
const fresh = (name = 'jobs.json') => join(root, `case-${++counter}`, name);

function conflict(fn: () => unknown, message: RegExp) {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof DroverError);
    assert.equal(err.code, 'conflict');
    assert.equal(err.exitCode, 2);
    assert.ok(!err.message.includes('\n'));
    assert.match(err.message, message);
    return true;
  });
}

test('serialize matches Python json.dump: ", " and ": ", ensure_ascii escapes, no newline', () => {
  const entries = new Map<number, JobEntry>([
    [
      1,
      {
        command: 'python run.py --name caf\u00e9 --emoji \u{1F600} --ctl \u0001\u007f --q "x" --b \\ --t \t/',
        tag: '',
      },
    ],
  ]);
  // Bytes produced by python3 -c 'import json; print(json.dumps({1: (...)}))' for the same strings.
  assert.equal(
    serializeJobfile(entries),
    '{"1": ["python run.py --name caf\\u00e9 --emoji \\ud83d\\ude00 --ctl \\u0001\\u007f --q \\"x\\" --b \\\\ --t \\t/", ""]}',
  );
  assert.equal(serializeJobfile(new Map()), '{}');
  assert.equal(
    serializeJobfile(new Map([[3, { command: '\b\f\n\r', tag: 't' }]])),
    '{"3": ["\\b\\f\\n\\r", "t"]}',
  );
});

test('write then read round-trips, in file order, and no temp file is left behind', () => {
  const path = fresh();
  const jobs = new Map<number, JobEntry>([
    [2, { command: 'b', tag: 'x_2' }],
    [1, { command: 'a \u00e9', tag: '' }],
    [10, { command: 'c', tag: 'x_10' }],
  ]);
  writeJobfileAtomic(path, serializeJobfile(jobs));
  const back = readJobfile(path);
  assert.deepEqual([...back], [...jobs]);
  assert.equal(serializeJobfile(back), readFileSync(path, 'utf8'));
  writeJobfileAtomic(path, '{}');
  assert.equal(readFileSync(path, 'utf8'), '{}');
  assert.deepEqual(readdirSync(join(path, '..')), ['jobs.json']);
});

test('appending to an onager-written jobfile continues after the max id and keeps its bytes', () => {
  const path = fresh();
  mkdirSync(join(path, '..'), { recursive: true });
  // As onager writes it (ids out of order on purpose: json.load keeps file order, so must we).
  const onager =
    '{"1": ["echo 1 --tag e_1__1", "e_1__1"], "9": ["echo 9 --tag e_9__9", "e_9__9"], "2": ["x", ""]}';
  writeFileSync(path, onager);
  const existing = readJobfile(path);
  const spec = parsePrelaunchArgs('+command echo +jobname e +pos-arg a b +tag +a'.split(' '));
  const jobs = addTasks(existing, expandSweep(spec, { startId: nextTaskId(existing) }));
  writeJobfileAtomic(path, serializeJobfile(jobs));
  assert.equal(
    readFileSync(path, 'utf8'),
    `${onager.slice(0, -1)}, "10": ["echo a --tag e_10__a", "e_10__a"], "11": ["echo b --tag e_11__b", "e_11__b"]}`,
  );
});

test('reading tolerates whitespace and pretty-printing, and folds duplicate ids as Python does', () => {
  const path = fresh();
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, '{\n  "3": ["c", "t3"],\n  "1": [ "a" , "" ],\n  "03": ["c2", "t"]\n}\n');
  assert.deepEqual(
    [...readJobfile(path)],
    [
      [3, { command: 'c2', tag: 't' }],
      [1, { command: 'a', tag: '' }],
    ],
  );
});

test('a missing, unreadable or corrupt jobfile is a conflict naming the path', () => {
  const missing = fresh();
  conflict(
    () => readJobfile(missing),
    new RegExp(`jobfile ${missing} does not exist; write it with drover prelaunch`),
  );
  const dir = fresh();
  mkdirSync(dir, { recursive: true });
  conflict(() => readJobfile(dir), /cannot be read \(EISDIR\)/);
  const cases: Array<[string, RegExp]> = [
    [
      '{"1": ["a", "b"]',
      /is not valid JSON .*; fix or remove it, or write a new one with drover prelaunch \(without \+append\)/,
    ],
    ['', /is not valid JSON/],
    ['[["a", "b"]]', /is not a JSON object of task id to \[command, tag\]/],
    ['null', /is not a JSON object/],
    ['{"x": ["a", "b"]}', /has key "x", not a task id >= 1/],
    ['{"0": ["a", "b"]}', /has key "0"/],
    ['{"-1": ["a", "b"]}', /has key "-1"/],
    ['{"1": ["a"]}', /has task 1 that is not \[command, tag\] \(two strings\)/],
    ['{"1": ["a", 2]}', /has task 1 that is not/],
    ['{"1": {"command": "a"}}', /has task 1 that is not/],
  ];
  for (const [text, message] of cases) {
    const path = fresh();
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, text);
    conflict(() => readJobfile(path), message);
  }
});

test('a jobfile that is no JSON is refused without quoting it: it may be any file (/etc/shadow)', () => {
  for (const text of [
    'root:x:0:0:root:/root:/bin/bash\n',
    'secret-token-123 {"1": ["a", "b"]}',
    '{"1": ["a", "b"]} trailing-secret',
  ]) {
    const path = fresh();
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, text);
    assert.throws(
      () => readJobfile(path),
      (err: Error) => /is not valid JSON/.test(err.message) && !/root:x|secret|trailing/.test(err.message),
      `the message quotes none of ${JSON.stringify(text)}`,
    );
  }
});

test('jobfile templates fill {jobname} like Python str.format', () => {
  assert.equal(jobfilePath(DEFAULT_JOBFILE, 'exp'), '.drover/jobs/exp/jobs.json');
  assert.equal(jobfilePath('.onager/scripts/{jobname}/jobs.json', 'e1'), '.onager/scripts/e1/jobs.json');
  assert.equal(jobfilePath('runs/{{x}}-{jobname}.json', 'e'), 'runs/{x}-e.json');
  assert.throws(() => jobfilePath('a/{', 'e'), /placeholder "\{"/);
  assert.throws(() => jobfilePath('a/}', 'e'), /lone '}'/);
  assert.throws(() => jobfilePath('a/{}', 'e'), /placeholder "\{\}"/);
});
