import type { LaunchRow } from '../../ledger/launches.js';
import type { Ledger } from '../../ledger/ledger.js';
import { markUnfinished } from '../../ledger/transitions.js';
import type { Backend } from '../backend.js';
import { expandAll } from './expand.js';
import { launchOnPool, recordPoolLaunch } from './record.js';
import { nudgeServer } from './server-info.js';

/**
 * Mark cancelled the tasks of a pool launch that no worker holds (queued, or waiting to retry), and leave a
 * cancel request for the controller to stop the others on their workers. Inside a write transaction.
 * Returns the ids cancelled at once.
 */
export function cancelPoolTasks(
  ledger: Ledger,
  launch: LaunchRow,
  tasks: readonly number[] | 'all',
): number[] {
  expandAll(ledger, launch.id);
  const wanted = tasks === 'all' ? undefined : new Set(tasks);
  const held = new Set(
    (
      ledger
        .stmt('SELECT task_id FROM pool_tasks WHERE launch_id = ? AND worker IS NOT NULL')
        .all(launch.id) as {
        task_id: number;
      }[]
    ).map((r) => r.task_id),
  );
  const free = (
    ledger
      .stmt("SELECT task_id FROM launch_tasks WHERE launch_id = ? AND state = 'queued'")
      .all(launch.id) as {
      task_id: number;
    }[]
  )
    .map((r) => r.task_id)
    .filter((id) => !held.has(id) && (!wanted || wanted.has(id)));
  const done = markUnfinished(ledger, launch.job_id, launch.id, free, 'cancelled', 'cancelled by the user');
  ledger
    .stmt(
      'DELETE FROM pool_tasks WHERE launch_id = ? AND worker IS NULL AND task_id IN (SELECT value FROM json_each(?))',
    )
    .run(launch.id, JSON.stringify(done));
  ledger
    .stmt('INSERT INTO pool_cancels (launch_id, tasks, at) VALUES (?, ?, ?)')
    .run(launch.id, JSON.stringify(tasks), Date.now() / 1000);
  return done;
}

/**
 * The backend of pool launches (`pool:NAME`). The controller writes their attempts into this same ledger as
 * workers report them; reading a launch makes sure all its task rows exist; a cancel is left in the database for
 * the controller (woken with SIGUSR1), and tasks no worker holds are cancelled at once.
 */
export const poolBackend: Backend = {
  name: 'pool',
  traits: { options: new Set(['numJobs']), refusal: 'the pool decides', taskRows: 'lazy' },
  record: recordPoolLaunch,
  launch: launchOnPool,
  reconcile(ledger: Ledger, launch: LaunchRow): void {
    expandAll(ledger, launch.id);
  },
  cancel(ledger: Ledger, launch: LaunchRow, tasks: readonly number[] | 'all'): void {
    cancelPoolTasks(ledger, launch, tasks);
    nudgeServer(ledger.paths);
  },
};
