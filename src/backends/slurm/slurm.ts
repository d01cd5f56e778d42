import type { Backend } from '../backend.js';
import { clusterLaunch } from '../cluster/launch.js';
import { CLUSTER_TRAITS } from '../cluster/traits.js';
import { cancelSlurm } from './cancel.js';
import { reconcileSlurm } from './reconcile.js';
import { checkSlurmRequest } from './sbatch-args.js';
import { previewSlurm, submitSlurm } from './submit.js';

/** The Slurm backend: job arrays with sbatch, states from runner records, squeue and accounting. See docs/slurm.md. */
export const slurmBackend: Backend = {
  name: 'slurm',
  traits: CLUSTER_TRAITS,
  check: checkSlurmRequest,
  launch: clusterLaunch(submitSlurm, previewSlurm),
  reconcile: reconcileSlurm,
  cancel: cancelSlurm,
};
