import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { type JobStatus, status } from '../../helpers/contract.js';
import { clusterSkip, slurmUp } from '../../helpers/real-scheduler.js';
import { killLeftovers, waitFor } from '../../helpers/workspace.js';

/**
 * Helpers of the tests that run drover on the real Slurm test cluster (scripts/test-cluster/slurm-up.sh).
 * Without a cluster those tests skip with a notice, unless DROVER_TEST_SLURM=1 (CI), where a missing cluster
 * fails them.
 */

export { slurmUp };

/** The `skip` option of the Slurm tests: a visible reason when there is no cluster and CI did not ask for one. */
export const SLURM_SKIP: string | false = clusterSkip('slurm');

/** Slurm launches' array ids recorded in a working folder's ledger. */
export function arrayIds(dir: string): string[] {
  const db = path.join(dir, '.drover', 'ledger.db');
  if (!fs.existsSync(db)) return [];
  const conn = new Database(db, { readonly: true, fileMustExist: true });
  try {
    return (
      conn.prepare("SELECT handles FROM launches WHERE backend = 'slurm'").all() as { handles: string }[]
    ).flatMap((r) =>
      ((JSON.parse(r.handles) as { arrays?: { id: string }[] }).arrays ?? []).map((a) => a.id),
    );
  } catch {
    return [];
  } finally {
    conn.close();
  }
}

/**
 * A fresh folder to run drover in. After the test, the arrays its launches submitted are scancelled (only
 * those), what they left running here is killed and the folder is removed.
 */
export function slurmWorkspace(t: { after(fn: () => Promise<void>): void }): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'drover-slurm-test-')));
  t.after(async () => {
    const ids = arrayIds(dir);
    if (ids.length > 0) {
      spawnSync('scancel', ids, { timeout: 30_000 });
      await waitFor(
        'the test’s arrays to leave the queue',
        () =>
          spawnSync('squeue', ['-h', '-j', ids.join(','), '-o', '%i'], { encoding: 'utf8' }).stdout.trim() ===
          '',
        30_000,
        250,
      ).catch(() => {});
    }
    await killLeftovers(dir);
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}

/** `drover status J --json` once no task of the job is queued or running (polled every second). */
export function settled(job: string, cwd: string, timeoutMs: number): Promise<JobStatus> {
  return waitFor(
    `every task of ${job} to end`,
    async () => {
      const s = await status(job, { cwd });
      return s.counts.queued + s.counts.running === 0 ? s : undefined;
    },
    timeoutMs,
    1000,
  );
}

/** The elements of some arrays squeue still has, as `A_I PD|R|...` lines. */
export function queued(ids: readonly string[]): string[] {
  const r = spawnSync('squeue', ['-h', '-r', '-j', ids.join(','), '-o', '%i %t'], { encoding: 'utf8' });
  return r.stdout.split('\n').filter((l) => l.trim() !== '');
}

/** A field of `scontrol show job ID` (e.g. Comment, JobState). */
export function jobField(id: string, field: string): string | undefined {
  const r = spawnSync('scontrol', ['-o', 'show', 'job', id], { encoding: 'utf8' });
  return new RegExp(`(?:^|\\s)${field}=(\\S*)`).exec(r.stdout)?.[1];
}

/** `scontrol show config`'s MaxArraySize. */
export function maxArraySize(): number {
  const r = spawnSync('scontrol', ['show', 'config'], { encoding: 'utf8' });
  return Number(/^MaxArraySize\s*=\s*(\d+)/m.exec(r.stdout)?.[1]);
}
