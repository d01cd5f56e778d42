import { parseBlocks, type TaskBlock } from '../../tasklist/tasklist.js';
import type { Ledger } from '../ledger.js';
import { getPoolLaunch, type PoolLaunchRow } from '../pool-launches.js';

/**
 * Pool launches are recorded in O(1) (one launch row and one pool_launches row naming the task ids as a
 * tasklist), so the request answers in the same time for 10 tasks or 100,000. Their launch_tasks (and, for
 * `--num-jobs`, tasks) rows are then made in chunks, by the controller right after it answered, or at once by
 * whoever reads the launch first (`drover status` through the pool backend's reconcile): either way with
 * set-based SQL, idempotently, in id order.
 */

/**
 * Write `createPoolLaunch`: the pool_launches row of a launch createLaunch made lazily (its tasks named by the
 * row's tasklist), in the caller's transaction when there is one. Nothing is expanded or handed out yet.
 */
export function createPoolLaunch(ledger: Ledger, row: Omit<PoolLaunchRow, 'expanded' | 'cursor'>): void {
  ledger.write(() =>
    ledger
      .stmt(
        `INSERT INTO pool_launches (launch_id, pool, tasklist, total, num_jobs, cpus, gpus, mem_mb, retries, retry_delay, settings)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        row.launch_id,
        row.pool,
        row.tasklist,
        row.total,
        row.num_jobs,
        row.cpus,
        row.gpus,
        row.mem_mb,
        row.retries,
        row.retry_delay,
        row.settings,
      ),
  );
}

/** Up to `limit` ids of sorted, non-overlapping blocks that are greater than `after`, in order. */
export function idsAfter(blocks: readonly TaskBlock[], after: number, limit: number): number[] {
  const out: number[] = [];
  for (const b of blocks) {
    if (b.last <= after) continue;
    let id = b.first;
    if (id <= after) id = b.first + Math.ceil((after + 1 - b.first) / b.step) * b.step;
    for (; id <= b.last && out.length < limit; id += b.step) out.push(id);
    if (out.length >= limit) break;
  }
  return out;
}

/**
 * Transition `expandLaunch`: the next `limit` tasks of a pool launch enter it (pending → queued: launch_tasks
 * rows; tasks rows for --num-jobs; the launch becomes the tasks' newest). One transaction, idempotent. Returns
 * how many entered (0 when the launch is fully expanded, or not a pool launch).
 */
export function expandLaunch(ledger: Ledger, launchId: number, limit: number): number {
  if (!ledger.db.inTransaction) return ledger.write(() => expandLaunch(ledger, launchId, limit));
  const pl = getPoolLaunch(ledger, launchId);
  if (!pl) return 0;
  const ids = idsAfter(parseBlocks(pl.tasklist), pl.expanded, limit);
  if (ids.length === 0) return 0;
  const launch = ledger.stmt('SELECT job_id, options FROM launches WHERE id = ?').get(launchId) as {
    job_id: number;
    options: string;
  };
  const json = JSON.stringify(ids);
  if (pl.num_jobs !== null) {
    const command = (JSON.parse(launch.options) as { command: string }).command;
    ledger
      .stmt(
        `INSERT INTO tasks (job_id, id, command, tag, state, last_launch_id)
         SELECT ?, value, ?, 'rank' || (value - 1), 'queued', ? FROM json_each(?) WHERE true
         ON CONFLICT (job_id, id) DO UPDATE SET state = 'queued', last_launch_id = excluded.last_launch_id, latest = NULL`,
      )
      .run(launch.job_id, command, launchId, json);
  } else {
    ledger
      .stmt(
        // No attempt of this launch exists yet: none is their latest (latest-attempt.ts).
        "UPDATE tasks SET state = 'queued', last_launch_id = ?, latest = NULL WHERE job_id = ? AND id IN (SELECT value FROM json_each(?))",
      )
      .run(launchId, launch.job_id, json);
  }
  ledger
    .stmt(
      `INSERT INTO launch_tasks (launch_id, task_id, state, revision)
       SELECT ?, id, 'queued', revision FROM tasks WHERE job_id = ? AND id IN (SELECT value FROM json_each(?))
       ON CONFLICT DO NOTHING`,
    )
    .run(launchId, launch.job_id, json);
  ledger.stmt('UPDATE pool_launches SET expanded = ? WHERE launch_id = ?').run(ids[ids.length - 1], launchId);
  return ids.length;
}

/** Transition `expandAll`: every task of a pool launch enters it (expandLaunch to the end). One transaction. */
export function expandAll(ledger: Ledger, launchId: number): void {
  ledger.write(() => {
    while (expandLaunch(ledger, launchId, 50_000) > 0) {
      // next chunk
    }
  });
}
