import { DroverError } from '../../errors.js';
import { launchTaskStates } from '../../ledger/launch-tasks.js';
import type { LaunchRow } from '../../ledger/launches.js';
import type { Ledger } from '../../ledger/ledger.js';
import { writeCancelRequest } from '../cluster/cancels.js';
import { qdelElements } from './commands.js';
import { launchElements, readHandles } from './handles.js';
import { forgetQueue } from './queue.js';

/**
 * Cancel tasks of a Grid Engine launch: drop the request in the launch's cancel/ folder (a runner stopped by Grid
 * Engine reads it and records those tasks `cancelled`, packed runners read it every 2 s, reconciliation reads it
 * too), then `qdel JOB -t first-last:step` for the elements whose queued or running tasks are all cancelled. A
 * pending element is gone at once (reconciliation records its tasks `cancelled`); a running one gets SIGUSR2
 * (-notify), which its script relays to the runner. Elements of a packed launch only partly cancelled keep
 * running their other tasks. When a qdel fails (the qmaster cannot be reached), the request is narrowed to what
 * was stopped and the failure is thrown: `qdel failed: ...`, exit 1.
 */
export function cancelGridEngine(ledger: Ledger, launch: LaunchRow, tasks: readonly number[] | 'all'): void {
  const narrow = writeCancelRequest(launch.dir, tasks);
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
  const outcome = qdelElements(stop);
  forgetQueue();
  if (outcome.failure === undefined) return;
  const unreached = new Set(outcome.unreached.flatMap((e) => e.tasks));
  const asked = tasks === 'all' ? rows.map((r) => r.task_id) : tasks;
  narrow(asked.filter((t) => !unreached.has(t)));
  throw new DroverError('backend', `qdel failed: ${outcome.failure}`);
}
