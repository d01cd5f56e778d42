import type { LaunchRow } from '../../ledger/launches.js';
import type { Ledger } from '../../ledger/ledger.js';
import { markUnfinished } from '../../ledger/transitions.js';
import { parseVisibleGpus, planSlots } from '../../runner/slots.js';
import { type Backend, NONE_KEPT_OPEN } from '../backend.js';
import { settleDeadRunner } from './dead-runner.js';
import { launchLocal } from './launch.js';
import { handles, requestCancel, runnerAlive } from './runner-handle.js';
import { thisProcessHandles } from './submit.js';

/** The local backend: a runner process on this machine, in the foreground or detached. */
export const localBackend: Backend = {
  name: 'local',
  traits: {
    options: new Set(['maxTasks', 'duration', 'detach', 'after']),
    refusal: 'it is for cluster schedulers',
    taskRows: 'eager',
    logs: ['segments', 'files'],
  },
  check(request) {
    // Checked before anything is written: the runner would refuse the same way.
    if (request.gpus === undefined) return;
    const visibleGpus = parseVisibleGpus(process.env.CUDA_VISIBLE_DEVICES);
    planSlots({ cpusAvailable: 1, gpusPerTask: request.gpus, visibleGpus }, '--gpus');
  },
  // Until it hands the launch to a runner, this process is its runner: a launch is never without one to check.
  initialHandles: thisProcessHandles,
  launch: launchLocal,
  reconcile(ledger: Ledger, launches: readonly LaunchRow[]): ReadonlySet<number> {
    for (const launch of launches)
      if (!runnerAlive(launch)) settleDeadRunner(ledger, launch, handles(launch)!.pid);
    return NONE_KEPT_OPEN;
  },
  cancel(ledger: Ledger, launch: LaunchRow, tasks: readonly number[] | 'all'): void {
    if (runnerAlive(launch)) requestCancel(launch, tasks);
    else markUnfinished(ledger, launch.job_id, launch.id, tasks, 'cancelled', 'cancelled by the user');
  },
};
