/**
 * Where a launch runs, as one text everywhere it is kept (the ledger's `backend` column, a spec, the API):
 * `local`, `slurm`, `gridengine`, or `pool:NAME` for a pool. This module is the only one that reads or writes
 * the `pool:` form; the others ask it.
 */

const POOL = 'pool:';

/** Where a launch runs, parsed: a backend by its name, or a pool by its. */
export type BackendRef = { kind: 'pool'; pool: string } | { kind: 'backend'; name: string };

/** A SQL LIKE pattern that the backend text of every pool's launches matches. */
export const POOL_LAUNCHES_LIKE = `${POOL}%`;

/** The text of a pool's launches' backend: `pool:NAME`. */
export function poolRef(pool: string): string {
  return `${POOL}${pool}`;
}

/** The pool of a backend text (`pool:NAME` gives NAME), or undefined for any other backend. */
export function poolOf(backend: string): string | undefined {
  return backend.startsWith(POOL) && backend.length > POOL.length ? backend.slice(POOL.length) : undefined;
}

/** A backend text parsed. */
export function backendRef(backend: string): BackendRef {
  const pool = poolOf(backend);
  return pool !== undefined ? { kind: 'pool', pool } : { kind: 'backend', name: backend };
}

/** How the user says where a launch runs: `--pool NAME` or `--backend NAME`. */
export function backendFlag(backend: string): string {
  const pool = poolOf(backend);
  return pool !== undefined ? `--pool ${pool}` : `--backend ${backend}`;
}

/** The argv that says where a launch runs: `['--pool', NAME]` or `['--backend', NAME]`. */
export function backendArgv(backend: string): string[] {
  const pool = poolOf(backend);
  return pool !== undefined ? ['--pool', pool] : ['--backend', backend];
}
