import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { elementEnds } from '../../../src/backends/slurm/accounting.js';

/**
 * Reconciling several Slurm launches reads a job completion log once for all of them, and each launch still
 * counts only the lines written since it was submitted (its offset), as when it read the log alone: a line of
 * an older job that had the same array id (Slurm's ids start again when its state is wiped) is not its own.
 */

const line = (id: number, array: number, index: number, state: string, exit: string) =>
  `JobId=${id} UserId=root(0) GroupId=root(0) Name=J·é JobState=${state} Partition=debug ArrayJobId=${array} ArrayTaskId=${index} ExitCode=${exit} \n`;

test('one read of the job completion log serves every launch, each from its own offset', (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-jobcomp-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'jobcomp.log');
  // Before launch A: an old job 27 (same id as launch B's array will get).
  fs.writeFileSync(file, line(28, 27, 1, 'FAILED', '3:0'));
  const a = { dir: path.join(dir, 'a'), created_at: 1000 };
  const offsetA = fs.statSync(file).size;
  fs.appendFileSync(file, line(13, 12, 1, 'TIMEOUT', '0:15'));
  const offsetB = fs.statSync(file).size;
  const b = { dir: path.join(dir, 'b'), created_at: 1010 };
  fs.appendFileSync(file, line(31, 30, 2, 'COMPLETED', '0:0'));
  const reads: string[] = [];
  const open = fs.openSync;
  t.mock.method(fs, 'openSync', (p: fs.PathLike, ...rest: unknown[]) => {
    if (p === file) reads.push(String(p));
    return (open as (...a: unknown[]) => number)(p, ...rest);
  });
  const [endsA, endsB, endsOld] = elementEnds([
    {
      accounting: { kind: 'jobcomp', file, offset: offsetA },
      launch: a,
      gone: [{ arrayId: '12', index: 1 }],
      live: [],
    },
    {
      accounting: { kind: 'jobcomp', file, offset: offsetB },
      launch: b,
      gone: [
        { arrayId: '27', index: 1 },
        { arrayId: '30', index: 2 },
      ],
      live: [],
    },
    // A launch from before the old job: the old job's line is its own.
    {
      accounting: { kind: 'jobcomp', file, offset: 0 },
      launch: a,
      gone: [{ arrayId: '27', index: 1 }],
      live: [],
    },
  ]);
  assert.equal(reads.length, 1, 'the log was read once');
  assert.deepEqual(Object.fromEntries(endsA!), {
    '12_1': { state: 'TIMEOUT', signal: 15, source: 'jobcomp' },
  });
  assert.deepEqual(
    Object.fromEntries(endsB!),
    { '30_2': { state: 'COMPLETED', exitCode: 0, source: 'jobcomp' } },
    "launch B does not take the older job 27's line as its element's end",
  );
  assert.deepEqual(Object.fromEntries(endsOld!), {
    '27_1': { state: 'FAILED', exitCode: 3, source: 'jobcomp' },
  });
  // A log rotated since (smaller than a launch's offset) is read from its start for that launch.
  fs.writeFileSync(file, line(29, 27, 1, 'CANCELLED', '0:0'));
  const [rotated] = elementEnds([
    {
      accounting: { kind: 'jobcomp', file, offset: offsetB },
      launch: b,
      gone: [{ arrayId: '27', index: 1 }],
      live: [],
    },
  ]);
  assert.deepEqual(Object.fromEntries(rotated!), {
    '27_1': { state: 'CANCELLED', exitCode: 0, source: 'jobcomp' },
  });
});
