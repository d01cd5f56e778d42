import { condenseIds } from '../../tasklist/tasklist.js';
import { idIn } from '../id-list.js';
import type { JobRow } from '../jobs.js';
import { refreshLatestSql } from '../latest-attempt.js';
import { getLaunch, type LaunchRow, refuseActive } from '../launches.js';
import type { Ledger } from '../ledger.js';

/**
 * The transitions of a launch as a whole: made (its tasks enter it: pending → queued), undone when its
 * submission was refused (they get back the state they had), and closed once every task of it is terminal.
 */

/**
 * Transition: create a launch of `taskIds` of `job` (those the job still has) and mark them `queued` in it and
 * as the tasks' newest launch; refused when one of them is queued or running already. One transaction. Returns
 * the launch and the ids of its tasks.
 *
 * `lazy` (pools): only the launch row is made, naming its tasks as a tasklist — `ranks` N for the ranks 1..N of a
 * `--num-jobs` job — so the transaction's size does not depend on the number of tasks; the dispatcher makes
 * their rows in chunks (transitions/expand.ts). Then `ids` is empty.
 */
export function createLaunch(
  ledger: Ledger,
  job: JobRow,
  backend: string,
  taskIds: readonly number[] | { ranks: number },
  options: object,
  dirOf: (launchId: number) => string,
  taskRows: 'eager' | 'lazy' = 'eager',
): { launch: LaunchRow; ids: number[] } {
  return ledger.write(() => {
    const now = Date.now() / 1000;
    let present: number[] = [];
    let tasklist: string;
    let count: number;
    if ('ranks' in taskIds) {
      tasklist = `1-${taskIds.ranks}`;
      count = taskIds.ranks;
    } else if (taskRows === 'lazy') {
      refuseActive(ledger, job, taskIds);
      tasklist = condenseIds(taskIds);
      count = taskIds.length;
    } else {
      // Read again inside the transaction: a prelaunch may have changed the job since the caller selected.
      // Ids only: the tasks' commands are read when the backend needs them (iterateLaunchTasks, launchTasks).
      const wanted = idIn('id', taskIds);
      present = ledger
        .stmt(`SELECT id FROM tasks WHERE job_id = ? AND ${wanted.sql} ORDER BY id`)
        .pluck()
        .all(job.id, ...wanted.params) as number[];
      refuseActive(ledger, job, present);
      tasklist = condenseIds(present);
      count = present.length;
    }
    const info = ledger
      .stmt(
        `INSERT INTO launches (job_id, backend, tasklist, task_count, created_at, dir, options)
         VALUES (?, ?, ?, ?, ?, '', ?)`,
      )
      .run(job.id, backend, tasklist, count, now, JSON.stringify(options));
    const id = Number(info.lastInsertRowid);
    const dir = dirOf(id);
    ledger.stmt('UPDATE launches SET dir = ? WHERE id = ?').run(dir, id);
    if (taskRows === 'eager') {
      // Set-based statements: one call each for the whole task list, whatever its size.
      const ids = idIn('id', present);
      ledger
        .stmt(
          `INSERT INTO launch_tasks (launch_id, task_id, state, revision)
           SELECT ?, id, 'queued', revision FROM tasks WHERE job_id = ? AND ${ids.sql}`,
        )
        .run(id, job.id, ...ids.params);
      ledger
        // No attempt of the new launch exists yet: none is their latest (latest-attempt.ts).
        .stmt(
          `UPDATE tasks SET state = 'queued', last_launch_id = ?, latest = NULL WHERE job_id = ? AND ${ids.sql}`,
        )
        .run(id, job.id, ...ids.params);
    }
    return { launch: getLaunch(ledger, id)!, ids: present };
  });
}

/** Transition: close a launch whose tasks have all reached a terminal state in it. Returns whether it closed. */
export function closeLaunchIfDone(ledger: Ledger, id: number): boolean {
  const left = ledger
    .stmt(
      "SELECT coalesce(sum(n), 0) AS n FROM launch_counts WHERE launch_id = ? AND state IN ('queued', 'running')",
    )
    .get(id) as { n: number };
  if (left.n > 0) return false;
  ledger.stmt('UPDATE launches SET open = 0 WHERE id = ?').run(id);
  return true;
}

/**
 * Transition: undo a launch that never reached its backend (the submission was refused): its tasks get back the
 * state they had in their previous launch (or `pending`), and the launch, its history entry and its folder's
 * records are forgotten.
 */
export function deleteLaunch(ledger: Ledger, launchId: number): void {
  ledger.write(() => {
    const launch = getLaunch(ledger, launchId);
    if (!launch) return;
    ledger
      .stmt(
        `UPDATE tasks SET
           last_launch_id = (SELECT max(launch_id) FROM launch_tasks lt WHERE lt.task_id = tasks.id AND lt.launch_id != ?
                             AND lt.revision = tasks.revision AND lt.launch_id IN (SELECT id FROM launches WHERE job_id = tasks.job_id)),
           state = coalesce((SELECT lt.state FROM launch_tasks lt WHERE lt.task_id = tasks.id AND lt.launch_id =
                     (SELECT max(launch_id) FROM launch_tasks l2 WHERE l2.task_id = tasks.id AND l2.launch_id != ?
                      AND l2.revision = tasks.revision
                      AND l2.launch_id IN (SELECT id FROM launches WHERE job_id = tasks.job_id))), 'pending')
         WHERE job_id = ? AND last_launch_id = ?`,
      )
      .run(launchId, launchId, launch.job_id, launchId);
    // Their latest attempt is their previous launch's again, if any.
    ledger
      .stmt(refreshLatestSql('job_id = ? AND id IN (SELECT task_id FROM launch_tasks WHERE launch_id = ?)'))
      .run(launch.job_id, launchId);
    ledger.stmt('DELETE FROM launch_tasks WHERE launch_id = ?').run(launchId);
    ledger.stmt('DELETE FROM launches WHERE id = ?').run(launchId);
    // A refused launch did not happen: its history entry goes too (nothing half-written).
    ledger.stmt('DELETE FROM history WHERE launch_id = ?').run(launchId);
  });
}
