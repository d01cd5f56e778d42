import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { ingestLaunch } from '../../src/ledger/ingest.js';
import { end, launch, launchState, makeJob, start, taskRow, tempLedger } from '../helpers/ledger.js';
import { captureWarnings, line, Writer } from '../helpers/records.js';

/** Record files damaged by crashes, full disks and bit rot: each fault is reported, none spreads. */

test('a damaged line in the middle is reported with its file and line, and the records after it count', (t) => {
  const ledger = tempLedger(t);
  const warnings = captureWarnings(ledger);
  const job = makeJob(ledger, 'J', 3);
  const l = launch(ledger, job, [1, 2, 3]);
  const w = new Writer(t);
  const file = w.file(l);
  const torn = line(start(2, 1)).slice(0, 40); // a start cut short by a crash, then a new line
  fs.writeFileSync(
    file,
    line(w.runner(l.id)) +
      line(start(1, 1)) +
      line(end(1, 1, 'succeeded', 0)) +
      `${torn}\n` +
      line(end(2, 1, 'failed', 3)) +
      line(start(3, 1)) +
      line(end(3, 1, 'succeeded', 0)),
  );
  ingestLaunch(ledger, l);
  // Task 2 lost its start line: its end still says how it ended (before: the end was dropped, the task `lost`).
  assert.deepEqual(
    [1, 2, 3].map((id) => [taskRow(ledger, job, id).state, taskRow(ledger, job, id).exit_code]),
    [
      ['succeeded', 0],
      ['failed', 3],
      ['succeeded', 0],
    ],
  );
  assert.equal(launchState(ledger, l.id, 2), 'failed');
  assert.equal(warnings.length, 1);
  assert.match(warnings[0]!, new RegExp(`^${file}:4: not JSON`));
  assert.equal(ingestLaunch(ledger, l), 0);
  assert.equal(warnings.length, 1, 'each damaged line is reported once');
});

test('a torn line the writer went on after: the whole record glued after the damage counts', (t) => {
  const ledger = tempLedger(t);
  const warnings = captureWarnings(ledger);
  const job = makeJob(ledger, 'J', 2);
  const l = launch(ledger, job, [1, 2]);
  const w = new Writer(t);
  const file = w.file(l);
  // A write cut short by a full disk, and the next write appended right after it (the old runners did).
  const torn = line(start(2, 1)).slice(0, 57);
  fs.writeFileSync(
    file,
    line(w.runner(l.id)) +
      line(start(1, 1)) +
      torn +
      line(end(1, 1, 'succeeded', 0)) +
      line(start(2, 1, 102)),
  );
  ingestLaunch(ledger, l);
  assert.equal(taskRow(ledger, job, 1).state, 'succeeded');
  assert.equal(taskRow(ledger, job, 2).state, 'running');
  assert.equal(warnings.length, 1);
  assert.match(warnings[0]!, new RegExp(`^${file}:3: .*the whole record after the damaged part counts`));
});

test('records that are JSON but not records are skipped and reported; they never block the others', (t) => {
  const ledger = tempLedger(t);
  const warnings = captureWarnings(ledger);
  const job = makeJob(ledger, 'J', 2);
  const l = launch(ledger, job, [1, 2]);
  const w = new Writer(t);
  const file = w.file(l);
  const bad: unknown[] = [
    { ...end(1, 1, 'succeeded', 0), state: 'exploded' }, // before: a CHECK failure that stopped all ingestion
    { ...start(1, 1), task: 'one' },
    { type: 'teleport', task: 1 },
    [1, 2, 3],
    42,
    { ...start(1, 1), attempt: 0 },
  ];
  fs.writeFileSync(
    file,
    line(w.runner(l.id)) +
      bad.map(line).join('') +
      line(start(1, 1)) +
      line(end(1, 1, 'succeeded', 0)) +
      line(start(2, 1)) +
      line(end(2, 1, 'timeout', null)),
  );
  assert.equal(ingestLaunch(ledger, l), 5);
  assert.equal(taskRow(ledger, job, 1).state, 'succeeded');
  assert.equal(taskRow(ledger, job, 2).state, 'timeout');
  assert.deepEqual(
    warnings.map((m) => Number(m.slice(file.length + 1).split(':')[0])),
    [2, 3, 4, 5, 6, 7],
  );
  assert.match(warnings[0]!, /an 'end' record with a bad 'state'/);
  assert.match(warnings[2]!, /an unknown record type "teleport"/);
});

test('a last line without its end is left alone while its writer lives, and applied once it is whole', (t) => {
  const ledger = tempLedger(t);
  const warnings = captureWarnings(ledger);
  const job = makeJob(ledger, 'J', 1);
  const l = launch(ledger, job, [1]);
  const w = new Writer(t);
  const file = w.file(l);
  const last = line(end(1, 1, 'succeeded', 0));
  fs.writeFileSync(file, line(w.runner(l.id)) + line(start(1, 1)) + last.slice(0, 20));
  assert.equal(ingestLaunch(ledger, l), 2);
  assert.equal(ingestLaunch(ledger, l), 0);
  assert.deepEqual(warnings, []);
  fs.appendFileSync(file, last.slice(20));
  assert.equal(ingestLaunch(ledger, l), 1);
  assert.equal(taskRow(ledger, job, 1).state, 'succeeded');
  assert.deepEqual(warnings, []);
});

test('a torn tail whose writer is gone is cut with a warning naming the file and line, never guessed at', async (t) => {
  const ledger = tempLedger(t);
  const warnings = captureWarnings(ledger);
  const job = makeJob(ledger, 'J', 2);
  const l = launch(ledger, job, [1, 2]);
  const w = new Writer(t);
  const file = w.file(l);
  const head = line(w.runner(l.id)) + line(start(1, 1)) + line(end(1, 1, 'succeeded', 0)) + line(start(2, 1));
  // The end of task 2 cut just before its closing brace: a guess would complete it as `failed`.
  fs.writeFileSync(file, head + line(end(2, 1, 'failed', 1)).slice(0, -2));
  assert.equal(ingestLaunch(ledger, l), 4);
  assert.deepEqual(warnings, [], 'not torn yet: the writer may still end the line');
  await w.die();
  assert.equal(ingestLaunch(ledger, l), 0);
  assert.equal(warnings.length, 1);
  assert.match(
    warnings[0]!,
    new RegExp(`^${file}:5: the file ends in the middle of a record \\(\\d+ bytes\\)`),
  );
  assert.equal(
    taskRow(ledger, job, 2).state,
    'running',
    'task 2 has no end: reconciliation says what became of it',
  );
  assert.equal(ingestLaunch(ledger, l), 0);
  assert.equal(warnings.length, 1, 'cut once');
});

test('line numbers count the lines ingested by earlier calls', (t) => {
  const ledger = tempLedger(t);
  const warnings = captureWarnings(ledger);
  const job = makeJob(ledger, 'J', 3);
  const l = launch(ledger, job, [1, 2, 3]);
  const w = new Writer(t);
  const file = w.file(l);
  fs.writeFileSync(file, line(w.runner(l.id)) + line(start(1, 1)) + line(end(1, 1, 'succeeded', 0)));
  ingestLaunch(ledger, l);
  fs.appendFileSync(file, `${line(start(2, 1))}\u0000garbage\n${line(end(2, 1, 'succeeded', 0))}`);
  ingestLaunch(ledger, l);
  assert.equal(warnings.length, 1);
  assert.ok(warnings[0]!.startsWith(`${file}:5: `), warnings[0]);
  assert.equal(taskRow(ledger, job, 2).state, 'succeeded');
});

test('skip-many records: their ranges are cancelled as skips would be; a bad one is reported and changes nothing', (t) => {
  const ledger = tempLedger(t);
  const warnings = captureWarnings(ledger);
  const job = makeJob(ledger, 'J', 12);
  const l = launch(
    ledger,
    job,
    Array.from({ length: 12 }, (_, i) => i + 1),
  );
  const w = new Writer(t);
  const file = w.file(l);
  const many = (ranges: unknown, extra: object = {}) => ({
    type: 'skip-many',
    ranges,
    at: 5,
    state: 'cancelled',
    ...extra,
  });
  const bad = [
    many([]),
    many([[3, 2]]),
    many([[0, 2]]),
    many([[1.5, 2]]),
    many([[1, 2, 3]]),
    many([[1, '2']]),
    many('1-4'),
    many(Array.from({ length: 10_001 }, (_, i) => [i + 1, i + 1])),
    many([[1, 4]], { state: 'failed' }),
    many([[1, 4]], { at: 'soon' }),
  ];
  fs.writeFileSync(
    file,
    line(w.runner(l.id)) +
      bad.map(line).join('') +
      line(start(1, 1)) +
      line(end(1, 1, 'succeeded', 0)) +
      line(start(2, 1)) +
      line(
        many([
          [1, 4],
          [9, 10],
          [12, 20],
        ]),
      ),
  );
  assert.equal(ingestLaunch(ledger, l), 5);
  assert.equal(warnings.length, bad.length, warnings.join('\n'));
  for (const [i, m] of warnings.entries()) {
    assert.equal(Number(m.slice(file.length + 1).split(':')[0]), i + 2, m);
    assert.match(m, /a 'skip-many' record with a bad '(ranges|state|at)'/);
  }
  // Succeeded and running tasks stay; queued ones in the ranges are cancelled; task 20 is not in the launch.
  const states = Array.from({ length: 12 }, (_, i) => taskRow(ledger, job, i + 1).state);
  assert.deepEqual(states, [
    'succeeded',
    'running',
    'cancelled',
    'cancelled',
    'queued',
    'queued',
    'queued',
    'queued',
    'cancelled',
    'cancelled',
    'queued',
    'cancelled',
  ]);
  assert.equal(launchState(ledger, l.id, 12), 'cancelled');
});
