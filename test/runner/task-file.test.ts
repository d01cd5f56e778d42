import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import type { AttemptRecord } from '../../src/protocol/records.js';
import { type GroupFile, type GroupTask, TaskFile, writeTaskFile } from '../../src/runner/group.js';
import { Runner } from '../../src/runner/runner.js';

/** A local launch's task file, read by its runner a megabyte at a time (src/runner/group.ts). */

function tempDir(t: { after(fn: () => void): void }): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-taskfile-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const task = fc
  .record({
    id: fc.integer({ min: 1, max: 2 ** 40 }),
    // Any text: newlines, quotes, characters of 1 to 4 bytes (so chunk boundaries fall inside them), and now and
    // then a command longer than the reader's megabyte.
    command: fc.oneof(
      { weight: 8, arbitrary: fc.string({ unit: 'binary', maxLength: 300 }) },
      {
        weight: 1,
        arbitrary: fc
          .tuple(fc.integer({ min: 1 << 19, max: (1 << 20) + 5000 }), fc.constantFrom('é', '€', '𝄞', 'a'))
          .map(([n, c]) => c.repeat(Math.ceil(n / c.length))),
      },
    ),
    attempt: fc.integer({ min: 1, max: 1000 }),
  })
  .map((t) => ({ ...t })); // a plain object, as JSON.parse makes

test('a task file gives back every task written to it, whatever the commands and where the chunks end', (t) => {
  const dir = tempDir(t);
  let run = 0;
  fc.assert(
    fc.property(fc.array(task, { maxLength: 40 }), (tasks) => {
      const file = path.join(dir, `tasks.${run++}.jsonl`);
      assert.equal(writeTaskFile(file, tasks), tasks.length);
      const list = new TaskFile(file, tasks.length);
      assert.deepEqual([...list], tasks);
      // Read twice: each iteration reads the file afresh.
      assert.deepEqual([...list].length, tasks.length);
    }),
    { numRuns: 60 },
  );
});

test('a damaged task file says which line and why, and a write that fails leaves no file', (t) => {
  const dir = tempDir(t);
  const good = '{"id":1,"command":"true","attempt":1}\n';
  const cases: [string, string, RegExp][] = [
    ['cut short', `${good}{"id":2,"comm`, /line 2 has no end: the file is cut short/],
    ['not JSON', `${good}{"id":2,\n`, /line 2 is not JSON/],
    ['no command', `${good}{"id":2,"attempt":1}\n`, /line 2 is not a task/],
    ['an id that is text', `${good}${good}{"id":"3","command":"x","attempt":1}\n`, /line 3 is not a task/],
    ['a list', '[1,"true",1]\n', /line 1 is not a task/],
    ['null', 'null\n', /line 1 is not a task/],
    ['an empty line', `${good}\n${good}`, /line 2 is not JSON/],
  ];
  for (const [what, text, error] of cases) {
    const file = path.join(dir, `${what}.jsonl`);
    fs.writeFileSync(file, text);
    assert.throws(
      () => [...new TaskFile(file, 3)],
      (err: Error) => {
        assert.match(err.message, error, what);
        assert.ok(err.message.startsWith(file), `${what}: names the file`);
        return true;
      },
    );
  }
  assert.throws(() => [...new TaskFile(path.join(dir, 'missing.jsonl'), 1)], /ENOENT.*missing\.jsonl/);
  // A write that fails halfway (here: the tasks themselves throw) leaves neither the file nor a temporary one.
  const file = path.join(dir, 'half.jsonl');
  function* failing(): Generator<GroupTask> {
    yield { id: 1, command: 'true', attempt: 1 };
    throw new Error('the ledger went away');
  }
  assert.throws(() => writeTaskFile(file, failing()), /the ledger went away/);
  assert.deepEqual(
    fs.readdirSync(dir).filter((n) => n.includes('half')),
    [],
  );
});

function group(dir: string, tasks: GroupFile['tasks'], extra: Partial<GroupFile> = {}): GroupFile {
  return {
    v: 1,
    job: 'J',
    launch: 1,
    maxTasks: 1,
    retries: 0,
    retryDelay: 0,
    killGrace: 1,
    logDir: path.join(dir, 'logs'),
    logs: 'segments',
    recordsDir: path.join(dir, 'records'),
    cancelDir: path.join(dir, 'cancel'),
    cwd: dir,
    group: '1',
    tasks,
    ...extra,
  };
}

function fileOf(dir: string, n: number): TaskFile {
  const file = path.join(dir, 'tasks.jsonl');
  const tasks = Array.from({ length: n }, (_, i) => ({ id: i + 1, command: 'true', attempt: 1 }));
  writeTaskFile(file, tasks);
  return new TaskFile(file, n);
}

/**
 * What the runner recorded of each task: `end` (it ran), `skip` (cancelled before it started, alone) or
 * `skip-many` (cancelled before it started, with all the others not started).
 */
function fates(records: AttemptRecord[]): Map<number, string> {
  const m = new Map<number, string>();
  for (const r of records) {
    if (r.type === 'end' || r.type === 'skip') m.set(r.task, r.type);
    if (r.type === 'skip-many')
      for (const [first, last] of r.ranges) for (let id = first; id <= last; id++) m.set(id, r.type);
  }
  return m;
}

test('tasks a cancel names before the runner has read them are recorded cancelled when their turn comes', async (t) => {
  const dir = tempDir(t);
  const records: AttemptRecord[] = [];
  const runner = new Runner(group(dir, fileOf(dir, 300)), { onRecord: (r) => records.push(r) });
  runner.cancel([3, 250, 9999]);
  const summary = await runner.run();
  const f = fates(records);
  assert.equal(f.size, 300);
  assert.equal(f.get(3), 'skip');
  assert.equal(f.get(250), 'skip');
  assert.equal([...f.values()].filter((v) => v === 'end').length, 298);
  assert.deepEqual(summary, { cancelled: 2, succeeded: 298 });
});

test('a cancel of all records every task not read yet, and the runner ends', async (t) => {
  const dir = tempDir(t);
  const records: AttemptRecord[] = [];
  const runner = new Runner(group(dir, fileOf(dir, 2000)), {
    onRecord: (r) => records.push(r),
    onEnd: (e) => {
      if (e.task === 5 && e.state === 'succeeded') runner.cancel('all');
    },
  });
  const summary = await runner.run();
  const f = fates(records);
  assert.equal(f.size, 2000, 'every task has a record');
  assert.equal((summary.succeeded ?? 0) + (summary.cancelled ?? 0), 2000);
  assert.ok((summary.cancelled ?? 0) > 1900, `most were cancelled: ${JSON.stringify(summary)}`);
  // The tasks never read are one range in one record, not a record each.
  const many = records.filter((r) => r.type === 'skip-many');
  assert.equal(many.length, 1, JSON.stringify(many));
  assert.equal(many[0]!.ranges.length, 1);
  assert.equal(many[0]!.ranges[0]![1], 2000);
});

test('tasks with gaps between their ids cancelled all at once: skip-many records of at most 10,000 ranges each', async (t) => {
  const dir = tempDir(t);
  const file = path.join(dir, 'tasks.jsonl');
  // Every other id (a tasklist such as `1-49999:2`): each task is a range of its own.
  const n = 25_000;
  writeTaskFile(
    file,
    Array.from({ length: n }, (_, i) => ({ id: 2 * i + 1, command: 'true', attempt: 1 })),
  );
  const records: AttemptRecord[] = [];
  const runner = new Runner(group(dir, new TaskFile(file, n)), { onRecord: (r) => records.push(r) });
  runner.cancel('all');
  const summary = await runner.run();
  assert.deepEqual(summary, { cancelled: n });
  const many = records.filter((r) => r.type === 'skip-many');
  assert.deepEqual(
    many.map((r) => r.ranges.length),
    [10_000, 10_000, 5_000],
  );
  const f = fates(records);
  assert.equal(f.size, n);
  for (let i = 0; i < n; i++) assert.equal(f.get(2 * i + 1), 'skip-many', `task ${2 * i + 1}`);
});

test('a scheduler stop records the named tasks not read yet as cancelled, and leaves the rest without a record', async (t) => {
  const dir = tempDir(t);
  const records: AttemptRecord[] = [];
  fs.mkdirSync(path.join(dir, 'cancel'));
  const runner = new Runner(group(dir, fileOf(dir, 1000), { termState: 'killed' }), {
    onRecord: (r) => records.push(r),
    onEnd: (e) => {
      if (e.task !== 2) return;
      fs.writeFileSync(path.join(dir, 'cancel', 'c.json'), JSON.stringify({ tasks: [900], at: 0 }));
      runner.terminate();
    },
  });
  await runner.run();
  const f = fates(records);
  assert.equal(f.get(900), 'skip');
  assert.ok(f.size < 100, `the tasks not started have no record: ${f.size}`);
  assert.equal(f.get(901), undefined);
});

test('a task file damaged in the middle: the tasks before the damage run, and the runner ends saying where', async (t) => {
  const dir = tempDir(t);
  const file = path.join(dir, 'tasks.jsonl');
  fs.writeFileSync(
    file,
    '{"id":1,"command":"true","attempt":1}\n{"id":2,"command":"true","attempt":1}\nnot a task\n{"id":4,"command":"true","attempt":1}\n',
  );
  const records: AttemptRecord[] = [];
  const said: string[] = [];
  const write = process.stderr.write;
  process.stderr.write = ((s: string) => said.push(String(s)) > 0) as typeof process.stderr.write;
  try {
    const summary = await new Runner(group(dir, new TaskFile(file, 4)), {
      onRecord: (r) => records.push(r),
    }).run();
    assert.deepEqual(summary, { succeeded: 2 });
  } finally {
    process.stderr.write = write;
  }
  assert.deepEqual([...fates(records).keys()], [1, 2]);
  assert.equal(said.length, 1);
  assert.match(said[0]!, /tasks\.jsonl: line 3 is not JSON: the tasks after it do not run\n$/);
});
