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
  // A log file per task by default. With `--logs segments` the elements that pack tasks and run the Python element
  // runner, or drover's runner (retries, time limits), write slot segments; the bash element runner and elements
  // of one task (single.pl, element.sh) keep a file per task, where segments would save nothing.
  logs: ['files', 'segments'],
};
