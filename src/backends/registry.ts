import { DroverError } from '../errors.js';
import type { Backend } from './backend.js';
import { localBackend } from './local/local.js';

const BACKENDS: Record<string, Backend> = { local: localBackend };

/** The backend that ran a launch, by the launch's `backend` column. */
export function backendFor(name: string): Backend {
  const b = BACKENDS[name];
  if (!b) throw new DroverError('internal', `this drover does not know backend '${name}': upgrade drover`);
  return b;
}
