import type { LaunchRow } from '../../ledger/launches.js';
import type { Ledger } from '../../ledger/ledger.js';
import { requestCancel } from '../local/runner-handle.js';
import { qdelElements } from './commands.js';
import { launchElements, readHandles } from './handles.js';
import { forgetQueue } from './queue.js';
import { launchTaskStates } from './reconcile.js';

/**
 * Cancel tasks of a Grid Engine launch: drop the request in the launch's cancel/ folder (runners stop those
 * tasks within 2 s and record them `cancelled`; reconciliation reads it too), then `qdel JOB -t first-last:step`
 * for the elements whose queued or running tasks are all cancelled. A pending element is gone at once
 * (reconciliation records its tasks `cancelled`); a running one gets SIGUSR2 (-notify), which its script
 * relays to the runner. Elements of a packed launch only partly cancelled keep running their other tasks.
 */
export function cancelGridEngine(ledger: Ledger, launch: LaunchRow, tasks: readonly number[] | 'all'): void {
  requestCancel(launch, tasks);
  const h = readHandles(launch);
  if (!h) return;
  const rows = launchTaskStates(ledger, launch.id);
  const open = new Set(
    rows.filter((r) => r.state === 'queued' || r.state === 'running').map((r) => r.task_id),
  );
  const wanted = tasks === 'all' ? undefined : new Set(tasks);
  const stop = launchElements(
    h,
    rows.map((r) => r.task_id),
  ).filter((e) => {
    const live = e.tasks.filter((t) => open.has(t));
    return live.length > 0 && (!wanted || live.every((t) => wanted.has(t)));
  });
  qdelElements(stop);
  forgetQueue();
}
