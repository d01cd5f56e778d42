import assert from 'node:assert/strict';
import test from 'node:test';
import { refusedRecords } from '../../src/controller/report-check.js';
import type { ReportBatch } from '../../src/protocol/messages.js';

const held = new Map([['7:3', { attempt: 1, started: false }]]);
const open = new Set([7]);
const start = { type: 'start', task: 3, attempt: 1, at: 1, host: 'h', pid: 1, slot: 0, gpus: [] };

test('a batch of a launch that is not open is refused even when it has no record', () => {
  for (const launch of [3, 999]) {
    const batches = [{ seq: 1, launch, records: [] }] as unknown as ReportBatch[];
    assert.deepEqual(refusedRecords(batches, held, open), [{ launch, task: 0, attempt: 0 }]);
  }
  // An empty batch of its own open launch is nothing to refuse; its held attempt's start is its own.
  const own = [
    { seq: 1, launch: 7, records: [] },
    { seq: 2, launch: 7, records: [start] },
  ] as unknown as ReportBatch[];
  assert.deepEqual(refusedRecords(own, held, open), []);
});
