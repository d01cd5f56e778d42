import { DroverError } from '../errors.js';
import type { Ledger } from '../ledger/ledger.js';
import { findPool, type PoolRow } from '../ledger/pools.js';
import type { Controller } from './controller.js';

export type { PoolRow };

/** What pool management needs from the server around it. */
export interface PoolContext {
  ledger: Ledger;
  controller: Controller;
  /** This controller's URL, for the workers. */
  url: string;
  cwd: string;
  node: string;
  bin: string;
  /** Automatic allocation (autoscale.ts), once the server runs it. */
  auto?: AutoScaling;
}

/** What the pool commands and `pool status` ask of automatic allocation. */
export interface AutoScaling {
  /** Look at the pools again soon (a pool was created, resumed, or a launch arrived). */
  soon(): void;
  /** `pool resume`: the pool is not paused any more; look again soon. */
  resumed(pool: string): void;
  /** The reason of the last decision about a pool, and whether it is paused. */
  decision(pool: string): { reason: string; paused: boolean } | undefined;
}

/** A pool by name, or a not-found error saying how to create it. */
export function getPool(ledger: Ledger, name: string, mustBeUp = true): PoolRow {
  const row = findPool(ledger, name);
  if (!row || (mustBeUp && row.state !== 'up')) {
    throw new DroverError(
      'not-found',
      `pool '${name}' does not exist${row ? ' any more (it is down)' : ''}: create it with drover pool create ${name} --workers N`,
    );
  }
  return row;
}
