import assert from 'node:assert/strict';
import path from 'node:path';
import Database from 'better-sqlite3';
import { droverJson, runDrover } from './drover.js';
import { isAlive, waitFor } from './workspace.js';

/**
 * Make job `name` (one task) and launch it detached, so that it ends with its records not read into the ledger
 * yet — what a cluster launch's records are until a command reads them in. A detached local runner keeps the
 * ledger current itself, so another writer (this function) holds the ledger's write lock while the runner runs:
 * its rounds skip, and its last ingest gives up. The task sleeps a little first, so the lock is taken before it
 * ends. Returns once the runner is gone.
 */
export async function launchLeftUningested(cwd: string, name: string): Promise<void> {
  const pre = await runDrover(
    ['prelaunch', '+command', 'sleep 0.5 && echo', '+jobname', name, '+pos-arg', 'x'],
    {
      cwd,
    },
  );
  assert.equal(pre.code, 0, pre.stderr);
  const { pid } = await droverJson<{ pid: number }>(['launch', name, '--detach', '--json'], { cwd });
  const holder = new Database(path.join(cwd, '.drover', 'ledger.db'), { fileMustExist: true });
  try {
    holder.exec('BEGIN IMMEDIATE');
    await waitFor('the detached runner to end', () => !isAlive(pid), 30_000, 50);
    holder.exec('ROLLBACK');
  } finally {
    holder.close();
  }
}
