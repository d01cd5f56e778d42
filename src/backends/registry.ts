import { DroverError, usageError } from '../errors.js';
import { poolOf } from '../protocol/backend-ref.js';
import type { Backend } from './backend.js';
import { gridEngineBackend } from './gridengine/gridengine.js';
import { localBackend } from './local/local.js';
import { poolBackend } from './pool/backend.js';
import { slurmBackend } from './slurm/slurm.js';

/** The backends `--backend` names; pools are `pool:NAME` (`--pool NAME`). */
const BACKENDS: Record<string, Backend> = {
  local: localBackend,
  slurm: slurmBackend,
  gridengine: gridEngineBackend,
};

/** The names `--backend` accepts. */
export const LAUNCH_BACKENDS: readonly string[] = Object.keys(BACKENDS);

/** The backend that ran a launch, by the launch's `backend` column. */
export function backendFor(name: string): Backend {
  const b = poolOf(name) !== undefined ? poolBackend : BACKENDS[name];
  if (!b) throw new DroverError('internal', `this drover does not know backend '${name}': upgrade drover`);
  return b;
}

/** The backend a new launch asks for; a usage error naming the choices when there is none by that name. */
export function launchBackend(name: string): Backend {
  if (poolOf(name) !== undefined) return poolBackend;
  const b = BACKENDS[name];
  if (!b) throw usageError(`--backend '${name}' is not a backend: use ${LAUNCH_BACKENDS.join(', ')}`);
  return b;
}
