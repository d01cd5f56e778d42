import type { Ledger } from './ledger.js';

/** The rows of pool allocations (pool_allocations): the array jobs of workers `--auto` submitted for a pool. */

/** What became of an allocation (the pool_allocations CHECK). */
export type AllocationState = 'queued' | 'running' | 'finished' | 'failed';

/** A pool_allocations row. */
export interface AllocationRow {
  id: number;
  pool: string;
  /** The scheduler's array job id; null when the submission was refused. */
  job: string | null;
  /** Array elements, one worker each. */
  workers: number;
  /** Unix seconds. */
  submitted_at: number;
  /** queued: no worker of it ready yet; running: one was; finished: none left; failed: none ever got ready. */
  state: AllocationState;
  /** Why it failed, or was withdrawn. */
  reason: string | null;
  /** Unix seconds it was seen finished or failed. */
  ended_at: number | null;
  /** 0 once `pool resume` forgave its failure. */
  counted: number;
}

/** Record an allocation just submitted (or refused: `job` null, state failed). Returns its id. */
export function insertAllocation(
  ledger: Ledger,
  a: Pick<AllocationRow, 'pool' | 'job' | 'workers' | 'submitted_at' | 'state' | 'reason'>,
): number {
  return ledger.write(() => {
    const r = ledger
      .stmt(
        `INSERT INTO pool_allocations (pool, job, workers, submitted_at, state, reason, ended_at)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        a.pool,
        a.job,
        a.workers,
        a.submitted_at,
        a.state,
        a.reason,
        a.state === 'failed' ? a.submitted_at : null,
      );
    return Number(r.lastInsertRowid);
  });
}

/** An allocation's new state (and why, and when it ended for finished and failed). */
export function setAllocationState(
  ledger: Ledger,
  id: number,
  state: AllocationState,
  reason: string | null,
  now: number,
): void {
  const ended = state === 'finished' || state === 'failed' ? now : null;
  ledger.write(() =>
    ledger
      .stmt('UPDATE pool_allocations SET state = ?, reason = ?, ended_at = ? WHERE id = ?')
      .run(state, reason, ended, id),
  );
}

/** A pool's allocations since `since` (unix s: its incarnation), oldest first. */
export function poolAllocations(ledger: Ledger, pool: string, since: number): AllocationRow[] {
  return ledger
    .stmt('SELECT * FROM pool_allocations WHERE pool = ? AND submitted_at >= ? ORDER BY id')
    .all(pool, since) as AllocationRow[];
}

/** `pool resume`: the pool's failed allocations no longer count toward a pause. */
export function forgiveFailures(ledger: Ledger, pool: string): void {
  ledger.write(() =>
    ledger.stmt("UPDATE pool_allocations SET counted = 0 WHERE pool = ? AND state = 'failed'").run(pool),
  );
}
