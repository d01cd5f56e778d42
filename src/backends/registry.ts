import { DroverError } from '../errors.js';
import type { Backend } from './backend.js';
import { gridEngineBackend } from './gridengine/gridengine.js';
import { localBackend } from './local/local.js';
import { poolBackend } from './pool/backend.js';
import { slurmBackend } from './slurm/slurm.js';

const BACKENDS: Record<string, Backend> = {
  local: localBackend,
  gridengine: gridEngineBackend,
  slurm: slurmBackend,
};

/** The backend that ran a launch, by the launch's `backend` column. */
export function backendFor(name: string): Backend {
  const b = name.startsWith('pool:') ? poolBackend : BACKENDS[name];
  if (!b) throw new DroverError('internal', `this drover does not know backend '${name}': upgrade drover`);
  return b;
}
