import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { counts, status } from '../helpers/contract.js';
import { runDrover } from '../helpers/drover.js';
import { waitFor } from '../helpers/workspace.js';
import { createPool, poolWorkspace } from './helpers.js';

function gridEngineUp(): boolean {
  const r = spawnSync('qstat', ['-f'], { encoding: 'utf8', timeout: 10_000 });
  return r.status === 0 && /@/.test(r.stdout);
}

/** Skip with a visible reason without Grid Engine, unless DROVER_TEST_GRIDENGINE=1 (then a missing one fails). */
const SKIP: string | false =
  process.env.DROVER_TEST_GRIDENGINE === '1' || gridEngineUp()
    ? false
    : 'no Grid Engine: run scripts/test-cluster/gridengine-up.sh';
if (SKIP) process.stderr.write(`NOTICE: Grid Engine pool test skipped: ${SKIP}\n`);

function poolJobs(cwd: string): string[] {
  const db = new Database(path.join(cwd, '.drover', 'ledger.db'), { readonly: true });
  try {
    return (db.prepare('SELECT handles FROM pools').all() as { handles: string }[]).flatMap((r) =>
      (JSON.parse(r.handles) as { kind: string; job?: string }[])
        .filter((h) => h.kind === 'gridengine')
        .map((h) => h.job!),
    );
  } finally {
    db.close();
  }
}

test('a pool whose workers are one Grid Engine array job runs a sweep', {
  skip: SKIP,
  timeout: 400_000,
}, async (t) => {
  const { cwd } = await poolWorkspace(t);
  t.after(() => {
    const ids = fs.existsSync(path.join(cwd, '.drover')) ? poolJobs(cwd) : [];
    if (ids.length > 0) spawnSync('qdel', ids, { timeout: 30_000 });
  });
  await createPool(
    cwd,
    'ge',
    ['--backend', 'gridengine', '--workers', '2', '--cpus', '1', '--duration', '10:00'],
    150_000,
  );
  const jobs = poolJobs(cwd);
  assert.equal(jobs.length, 1, 'one array job for the pool');
  const values = Array.from({ length: 20 }, (_, i) => String(i + 1));
  const pre = await runDrover(
    ['prelaunch', '+command', "sh -c 'echo $JOB_ID $0'", '+jobname', 'GE', '+pos-arg', ...values, '+q'],
    { cwd },
  );
  assert.equal(pre.code, 0, pre.stderr);
  const r = await runDrover(['launch', '--pool', 'ge', '--jobname', 'GE', '--follow', '--json'], { cwd });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual((await status('GE', { cwd })).counts, counts({ succeeded: 20 }));
  const log = await runDrover(['logs', 'GE', '3'], { cwd });
  assert.equal(log.stdout, `${jobs[0]} 3\n`, 'the task ran inside the Grid Engine array task');
  // Scaling counts the array elements on their way: asking for 3 twice submits one more array, not two.
  for (let i = 0; i < 2; i++) {
    const sc = await runDrover(['pool', 'scale', 'ge', '--workers', '3'], { cwd });
    assert.equal(sc.code, 0, sc.stderr);
  }
  assert.equal(poolJobs(cwd).length, 2);
  await waitFor(
    '3 workers ready',
    async () =>
      (
        JSON.parse((await runDrover(['pool', 'status', 'ge', '--json'], { cwd })).stdout) as {
          workers: { state: string }[];
        }
      ).workers.filter((w) => w.state === 'ready').length === 3,
    150_000,
  );
  const down = await runDrover(['pool', 'down', 'ge'], { cwd });
  assert.equal(down.code, 0, down.stderr);
  await waitFor(
    'the array jobs to leave the queue',
    () => {
      const q = spawnSync('qstat', [], { encoding: 'utf8' }).stdout;
      return poolJobs(cwd).every((j) => !q.includes(` ${j} `));
    },
    60_000,
    500,
  );
});
