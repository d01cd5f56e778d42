import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { droverJson, runDrover } from '../../helpers/drover.js';
import { readRecords, tempWorkspace } from '../../helpers/workspace.js';
import { makeLaunch } from '../../runner/runner-harness.js';
import { writeLaunchFile } from '../../runner/runners.js';

/**
 * `drover runner --ingest-into DIR` (internal: what a detached local launch starts) keeps DIR's ledger current
 * only when that ledger made the launch. A folder removed since, or another folder's ledger, is refused with one
 * line: the tasks run all the same and their records stay for `drover status`, and no ledger is made or touched.
 */

/** A launch folder (launch 3 of job J) with two quick tasks, and its launch file. */
function launchFile(t: Parameters<typeof makeLaunch>[0]): { dir: string; file: string } {
  const l = makeLaunch(t, { commands: ['true', 'echo hi'] });
  return { dir: l.dir, file: writeLaunchFile(l) };
}

/** Run the runner; its tasks must have run, and it must have said why it keeps no ledger. */
async function runRefused(dir: string, file: string, into: string): Promise<string> {
  const r = await runDrover(['runner', file, '--ingest-into', into], { cwd: dir });
  assert.equal(r.code, 0, r.stderr);
  const ends = readRecords(dir).filter((x) => x.type === 'end');
  assert.deepEqual(ends.map((x) => [x.task, x.state]).sort(), [
    [1, 'succeeded'],
    [2, 'succeeded'],
  ]);
  const lines = r.stderr.split('\n').filter((x) => x !== '');
  assert.equal(lines.length, 1, r.stderr);
  assert.match(lines[0]!, /^drover runner: not keeping the ledger current \(.+\): drover status will ingest/);
  return lines[0]!;
}

test('a runner told to keep a ledger that is gone runs its tasks and makes no ledger', async (t) => {
  const { dir, file } = launchFile(t);
  const gone = path.join(dir, 'removed', '.drover');
  assert.match(await runRefused(dir, file, gone), /ledger\.db does not exist/);
  assert.equal(fs.existsSync(path.join(dir, 'removed')), false, 'nothing made where the folder was');
});

test('a runner told to keep another folder’s ledger leaves it as it was', async (t) => {
  const { dir, file } = launchFile(t);
  // Another workspace whose ledger has a launch 3 of a job J of its own.
  const other = tempWorkspace(t);
  const pre = await runDrover(
    ['prelaunch', '+command', 'echo', '+jobname', 'J', '+pos-arg', '1', '2', '3', '+q'],
    {
      cwd: other,
    },
  );
  assert.equal(pre.code, 0, pre.stderr);
  for (const task of ['1', '2', '3']) {
    const r = await runDrover(['launch', 'J', '--tasklist', task, '-q'], { cwd: other });
    assert.equal(r.code, 0, r.stderr);
  }
  const before = await droverJson(['list', 'J', '--attempts', '--json'], { cwd: other });
  assert.match(await runRefused(dir, file, path.join(other, '.drover')), /launch 3 is in .+, not /);
  assert.deepEqual(await droverJson(['list', 'J', '--attempts', '--json'], { cwd: other }), before);
  // And its own folder's ledger was never made: the records wait for a drover status there.
  assert.equal(fs.existsSync(path.join(dir, '.drover', 'ledger.db')), false);
});
