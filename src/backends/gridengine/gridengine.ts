import type { Backend } from '../backend.js';
import { clusterLaunch } from '../cluster/launch.js';
import { CLUSTER_TRAITS } from '../cluster/traits.js';
import { cancelGridEngine } from './cancel.js';
import { reconcileGridEngine } from './reconcile.js';
import { previewGridEngine, submitGridEngine } from './submit.js';

/** The Grid Engine backend: array jobs with qsub, states from runner records, qstat and qacct. See docs/gridengine.md. */
export const gridEngineBackend: Backend = {
  name: 'gridengine',
  traits: CLUSTER_TRAITS,
  launch: clusterLaunch(submitGridEngine, previewGridEngine),
  reconcile: reconcileGridEngine,
  cancel: cancelGridEngine,
};
