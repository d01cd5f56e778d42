import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { ingestLaunch, recordsDir } from '../../src/ledger/ingest.js';
import { Ledger } from '../../src/ledger/ledger.js';
import { attemptRows, end, launch, makeJob, start, taskRow, tempLedger } from '../helpers/ledger.js';

const line = (r: object) => `${JSON.stringify(r)}\n`;

test('ingestLaunch applies each record once, however often it is called', (t) => {
  const ledger = tempLedger(t);
  const job = makeJob(ledger, 'J', 2);
  const l = launch(ledger, job, [1, 2]);
  fs.mkdirSync(recordsDir(l), { recursive: true });
  const file = path.join(recordsDir(l), 'g1.h.1.jsonl');
  fs.writeFileSync(file, line(start(1, 1)) + line(end(1, 1, 'failed', 1)) + line(start(1, 2)));
  assert.equal(ingestLaunch(ledger, l), 3);
  assert.equal(ingestLaunch(ledger, l), 0);
  assert.deepEqual(taskRow(ledger, job, 1), {
    state: 'running',
    exit_code: null,
    attempts: 2,
    last_launch_id: l.id,
  });

  fs.appendFileSync(file, line(end(1, 2, 'succeeded', 0)));
  assert.equal(ingestLaunch(ledger, l), 1);
  assert.equal(ingestLaunch(ledger, l), 0);
  assert.deepEqual(taskRow(ledger, job, 1), {
    state: 'succeeded',
    exit_code: 0,
    attempts: 2,
    last_launch_id: l.id,
  });
  assert.equal(attemptRows(ledger, job, 1).length, 2);
});

test('a partly written last line is left for the next call', (t) => {
  const ledger = tempLedger(t);
  const job = makeJob(ledger, 'J', 1);
  const l = launch(ledger, job, [1]);
  fs.mkdirSync(recordsDir(l), { recursive: true });
  const file = path.join(recordsDir(l), 'g1.h.1.jsonl');
  const whole = line(start(1, 1)) + line(end(1, 1, 'succeeded', 0));
  const cut = whole.length - 10;
  fs.writeFileSync(file, whole.slice(0, cut));
  assert.equal(ingestLaunch(ledger, l), 1);
  assert.equal(taskRow(ledger, job, 1).state, 'running');
  fs.appendFileSync(file, whole.slice(cut));
  assert.equal(ingestLaunch(ledger, l), 1);
  assert.equal(taskRow(ledger, job, 1).state, 'succeeded');
});

test('two connections ingesting the same files in turn apply each record once', (t) => {
  const ledger = tempLedger(t);
  const other = Ledger.open(ledger.paths);
  t.after(() => other.close());
  const job = makeJob(ledger, 'J', 20);
  const l = launch(
    ledger,
    job,
    Array.from({ length: 20 }, (_, i) => i + 1),
  );
  fs.mkdirSync(recordsDir(l), { recursive: true });
  const file = path.join(recordsDir(l), 'g1.h.1.jsonl');
  let applied = 0;
  for (let id = 1; id <= 20; id++) {
    fs.appendFileSync(file, line(start(id, 1)) + line(end(id, 1, 'succeeded', 0)));
    applied += ingestLaunch(id % 2 ? ledger : other, l);
    applied += ingestLaunch(id % 2 ? other : ledger, l);
  }
  assert.equal(applied, 40);
  const n = ledger.db.prepare('SELECT count(*) AS n FROM attempts WHERE job_id = ?').get(job.id) as {
    n: number;
  };
  assert.equal(n.n, 20);
  for (let id = 1; id <= 20; id++) assert.equal(taskRow(ledger, job, id).attempts, 1);
});
