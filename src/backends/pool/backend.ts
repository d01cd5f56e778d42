import type { LaunchRow } from '../../ledger/launches.js';
import type { Ledger } from '../../ledger/ledger.js';
import { cancelPoolTasks, expandAll } from '../../ledger/transitions.js';
import { type Backend, NONE_KEPT_OPEN } from '../backend.js';
import { launchOnPool, recordPoolLaunch } from './record.js';
import { nudgeServer } from './server-info.js';

/**
 * The backend of pool launches (`pool:NAME`). The controller writes their attempts into this same ledger as
 * workers report them; reading a launch makes sure all its task rows exist; a cancel is left in the database for
 * the controller (woken with SIGUSR1), and tasks no worker holds are cancelled at once.
 */
export const poolBackend: Backend = {
  name: 'pool',
  traits: {
    options: new Set(['numJobs']),
    refusal: 'the pool decides',
    taskRows: 'lazy',
    logs: ['segments', 'files'],
  },
  record: recordPoolLaunch,
  launch: launchOnPool,
  reconcile(ledger: Ledger, launches: readonly LaunchRow[]): ReadonlySet<number> {
    for (const launch of launches) expandAll(ledger, launch.id);
    return NONE_KEPT_OPEN;
  },
  cancel(ledger: Ledger, launch: LaunchRow, tasks: readonly number[] | 'all'): void {
    cancelPoolTasks(ledger, launch, tasks);
    nudgeServer(ledger.paths);
  },
};
