import type { BackendTraits } from '../backend.js';

/** What a cluster backend takes: every scheduler option, packing, `--` arguments; not --detach (it returns once submitted). */
export const CLUSTER_TRAITS: BackendTraits = {
  options: new Set([
    'maxTasks',
    'duration',
    'tasksPerNode',
    'maxTasksPerNode',
    'partition',
    'account',
    'qos',
    'after',
    'extraArgs',
  ]),
  refusal: 'cluster launches always return once submitted',
  taskRows: 'eager',
  // The element runners (element.py, element.sh, single.pl) write a log file per task.
  logs: ['files'],
};
