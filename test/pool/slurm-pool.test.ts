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

function slurmUp(): boolean {
  const r = spawnSync('sinfo', ['-h', '-o', '%T'], { encoding: 'utf8', timeout: 10_000 });
  return r.status === 0 && /\b(idle|mixed|allocated|completing)\b/.test(r.stdout);
}

/** Skip with a visible reason when there is no Slurm, unless DROVER_TEST_SLURM=1 (then a missing cluster fails). */
const SKIP: string | false =
  process.env.DROVER_TEST_SLURM === '1' || slurmUp()
    ? false
    : 'no Slurm: run scripts/test-cluster/slurm-up.sh';

/** The Slurm array job ids a folder's pools submitted (only these are ever scancelled). */
function poolJobs(cwd: string): string[] {
  const db = new Database(path.join(cwd, '.drover', 'ledger.db'), { readonly: true });
  try {
    return (db.prepare('SELECT handles FROM pools').all() as { handles: string }[]).flatMap((r) =>
      (JSON.parse(r.handles) as { kind: string; job?: string }[])
        .filter((h) => h.kind === 'slurm')
        .map((h) => h.job!),
    );
  } finally {
    db.close();
  }
}

test('a pool whose workers are one Slurm array runs a sweep', { skip: SKIP, timeout: 400_000 }, async (t) => {
  const { cwd } = await poolWorkspace(t);
  t.after(() => {
    const ids = fs.existsSync(path.join(cwd, '.drover')) ? poolJobs(cwd) : [];
    if (ids.length > 0) spawnSync('scancel', ids, { timeout: 30_000 });
  });
  await createPool(
    cwd,
    'sl',
    ['--backend', 'slurm', '--workers', '2', '--cpus', '1', '--duration', '10:00'],
    150_000,
  );
  const jobs = poolJobs(cwd);
  assert.equal(jobs.length, 1, 'one array job for the pool');
  const q = spawnSync('squeue', ['-h', '-j', jobs[0]!, '-o', '%i %j'], { encoding: 'utf8' });
  assert.match(q.stdout, new RegExp(`${jobs[0]}_1 drover-pool-sl`));
  assert.match(q.stdout, new RegExp(`${jobs[0]}_2 drover-pool-sl`));

  const values = Array.from({ length: 30 }, (_, i) => String(i + 1));
  const pre = await runDrover(
    [
      'prelaunch',
      '+command',
      "sh -c 'echo $SLURM_ARRAY_JOB_ID $0'",
      '+jobname',
      'SL',
      '+pos-arg',
      ...values,
      '+q',
    ],
    { cwd },
  );
  assert.equal(pre.code, 0, pre.stderr);
  const r = await runDrover(['launch', '--pool', 'sl', '--jobname', 'SL', '--follow', '--json'], { cwd });
  assert.equal(r.code, 0, r.stderr);
  const s = await status('SL', { cwd });
  assert.deepEqual(s.counts, counts({ succeeded: 30 }));
  const log = await runDrover(['logs', 'SL', '5'], { cwd });
  assert.equal(log.stdout, `${jobs[0]} 5\n`, 'the task ran inside the Slurm array element');

  // Scaling counts the array elements on their way: asking for 3 twice submits one more array, not two.
  for (let i = 0; i < 2; i++) {
    const sc = await runDrover(['pool', 'scale', 'sl', '--workers', '3'], { cwd });
    assert.equal(sc.code, 0, sc.stderr);
  }
  assert.equal(poolJobs(cwd).length, 2);
  await waitFor(
    '3 workers ready',
    async () =>
      (
        JSON.parse((await runDrover(['pool', 'status', 'sl', '--json'], { cwd })).stdout) as {
          workers: { state: string }[];
        }
      ).workers.filter((w) => w.state === 'ready').length === 3,
    150_000,
  );
  const down = await runDrover(['pool', 'down', 'sl'], { cwd });
  assert.equal(down.code, 0, down.stderr);
  await waitFor(
    'the arrays to leave the queue',
    () =>
      spawnSync('squeue', ['-h', '-j', poolJobs(cwd).join(','), '-o', '%i'], {
        encoding: 'utf8',
      }).stdout.trim() === '',
    60_000,
    500,
  );
});
