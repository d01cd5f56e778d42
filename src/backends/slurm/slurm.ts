import type { Backend } from '../backend.js';
import { cancelSlurm } from './cancel.js';
import { reconcileSlurm } from './reconcile.js';
import { previewSlurm, submitSlurm } from './submit.js';

/** The Slurm backend: job arrays with sbatch, states from runner records, squeue and accounting. See docs/slurm.md. */
export const slurmBackend: Backend = {
  name: 'slurm',
  submit: submitSlurm,
  preview: previewSlurm,
  reconcile: reconcileSlurm,
  cancel: cancelSlurm,
};
