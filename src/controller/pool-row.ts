import { DroverError } from '../errors.js';
import type { Ledger } from '../ledger/ledger.js';
import type { Controller } from './controller.js';

/** A pools row. */
export interface PoolRow {
  name: string;
  backend: 'local' | 'slurm' | 'gridengine';
  /** Workers wanted. */
  workers: number;
  cpus: number;
  gpus: number;
  mem_mb: number;
  /** Seconds each worker may live. */
  duration: number | null;
  slots: number;
  setup: string | null;
  state: 'up' | 'down';
  created_at: number;
  /** JSON array of WorkerHandle. */
  handles: string;
  /** JSON: scheduler options and mem text. */
  options: string;
}

/** What pool management needs from the server around it. */
export interface PoolContext {
  ledger: Ledger;
  controller: Controller;
  /** This controller's URL, for the workers. */
  url: string;
  cwd: string;
  node: string;
  bin: string;
}

/** A pool by name, or a not-found error saying how to create it. */
export function getPool(ledger: Ledger, name: string, mustBeUp = true): PoolRow {
  const row = ledger.stmt('SELECT * FROM pools WHERE name = ?').get(name) as PoolRow | undefined;
  if (!row || (mustBeUp && row.state !== 'up')) {
    throw new DroverError(
      'not-found',
      `pool '${name}' does not exist${row ? ' any more (it is down)' : ''}: create it with drover pool create ${name} --workers N`,
    );
  }
  return row;
}
