import type { Backend } from '../backend.js';
import { cancelGridEngine } from './cancel.js';
import { reconcileGridEngine } from './reconcile.js';
import { previewGridEngine, submitGridEngine } from './submit.js';

/** The Grid Engine backend: array jobs with qsub, states from runner records, qstat and qacct. See docs/gridengine.md. */
export const gridEngineBackend: Backend = {
  name: 'gridengine',
  submit: async (req) => submitGridEngine(req),
  preview: previewGridEngine,
  reconcile: reconcileGridEngine,
  cancel: cancelGridEngine,
};
