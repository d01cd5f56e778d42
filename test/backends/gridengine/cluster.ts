import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { type TestContext, test } from 'node:test';
import Database from 'better-sqlite3';
import { tempWorkspace } from '../../helpers/workspace.js';

/**
 * The real Grid Engine for the integration tests (scripts/test-cluster/gridengine-up.sh). Without one the tests
 * are skipped with a notice; with DROVER_TEST_GRIDENGINE=1 (CI) a missing cluster fails them.
 */

function probe(): string | undefined {
  const r = spawnSync('qstat', ['-xml'], { encoding: 'utf8', timeout: 30_000 });
  if (r.error) return `qstat cannot be run (${r.error.message})`;
  if (r.status !== 0) return `qstat failed: ${(r.stderr || r.stdout).trim().split('\n')[0]}`;
  return undefined;
}

const missing = probe();
const required = process.env.DROVER_TEST_GRIDENGINE === '1';
if (missing && !required) {
  process.stderr.write(
    `NOTICE: Grid Engine tests skipped: ${missing}. Start one with: sudo bash scripts/test-cluster/gridengine-up.sh\n`,
  );
}

type Body = (t: TestContext) => Promise<void>;

/** A test on the real Grid Engine: skipped with a notice without one, failed without one in CI. */
export function clusterTest(name: string, body: Body): void {
  if (!missing) test(name, body);
  else if (required)
    test(name, () => {
      throw new Error(
        `DROVER_TEST_GRIDENGINE=1 but ${missing}: bring it up with scripts/test-cluster/gridengine-up.sh`,
      );
    });
  else test(name, { skip: `no Grid Engine: ${missing}` }, () => {});
}

/** Grid Engine job ids of every launch in a working folder (from the ledger's handles). */
export function launchedJobs(dir: string): string[] {
  const db = path.join(dir, '.drover', 'ledger.db');
  if (!fs.existsSync(db)) return [];
  const conn = new Database(db, { readonly: true, fileMustExist: true });
  try {
    return (
      conn.prepare("SELECT handles FROM launches WHERE backend = 'gridengine'").all() as { handles: string }[]
    )
      .flatMap((r) => (JSON.parse(r.handles) as { arrays?: { id: string }[] }).arrays ?? [])
      .map((a) => a.id);
  } finally {
    conn.close();
  }
}

/** A temp folder for a test; afterwards every Grid Engine job its launches submitted is deleted. */
export function clusterWorkspace(t: TestContext): string {
  let dir = '';
  t.after(() => {
    for (const id of launchedJobs(dir)) spawnSync('qdel', [id], { encoding: 'utf8' });
  });
  dir = tempWorkspace(t, 'drover-ge-test-');
  return dir;
}

/** Whether Grid Engine still lists a job. */
export function inQueue(job: string): boolean {
  return spawnSync('qstat', ['-j', job], { encoding: 'utf8' }).status === 0;
}
