import { POOL_LAUNCHES_LIKE, poolRef } from '../protocol/backend-ref.js';
import type { LaunchRow } from './launches.js';
import type { Ledger } from './ledger.js';

/** The rows of pools (pools): what each pool is made of and what started its workers. */

/** A pools row. */
export interface PoolRow {
  name: string;
  backend: 'local' | 'slurm' | 'gridengine';
  /** Workers wanted. */
  workers: number;
  /** Per worker. */
  cpus: number;
  gpus: number;
  /** Per worker; 0: not tracked. */
  mem_mb: number;
  /** Seconds each worker may live. */
  duration: number | null;
  /** Tasks at once per worker. */
  slots: number;
  /** Command run once per worker before it takes tasks. */
  setup: string | null;
  state: 'up' | 'down';
  /** Unix seconds of its creation (or its last coming up again). */
  created_at: number;
  /** JSON array of WorkerHandle. */
  handles: string;
  /** JSON: scheduler options and mem text. */
  options: string;
  /** JSON AutoSettings when the pool allocates its workers by itself (`--auto`), else null. */
  auto: string | null;
}

/** A pool's row, or undefined. */
export function findPool(ledger: Ledger, name: string): PoolRow | undefined {
  return ledger.stmt('SELECT * FROM pools WHERE name = ?').get(name) as PoolRow | undefined;
}

/** Every pool's name, backend, state and workers wanted, by name. */
export function listPoolRows(
  ledger: Ledger,
): { name: string; backend: string; state: string; workers: number }[] {
  return ledger.stmt('SELECT name, backend, state, workers FROM pools ORDER BY name').all() as {
    name: string;
    backend: string;
    state: string;
    workers: number;
  }[];
}

/** Create a pool, or bring a downed one up again with new settings (no handles yet). */
export function upsertPool(ledger: Ledger, p: Omit<PoolRow, 'state' | 'handles'>): void {
  ledger.write(() =>
    ledger
      .stmt(
        `INSERT INTO pools (name, backend, workers, cpus, gpus, mem_mb, duration, slots, setup, state, created_at, handles, options, auto)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'up', ?, '[]', ?, ?)
         ON CONFLICT (name) DO UPDATE SET backend = excluded.backend, workers = excluded.workers, cpus = excluded.cpus,
           gpus = excluded.gpus, mem_mb = excluded.mem_mb, duration = excluded.duration, slots = excluded.slots,
           setup = excluded.setup, state = 'up', created_at = excluded.created_at, handles = '[]', options = excluded.options,
           auto = excluded.auto`,
      )
      .run(
        p.name,
        p.backend,
        p.workers,
        p.cpus,
        p.gpus,
        p.mem_mb,
        p.duration,
        p.slots,
        p.setup,
        p.created_at,
        p.options,
        p.auto,
      ),
  );
}

/** Add to what started a pool's workers (JSON array of handles), in one transaction. */
export function addPoolHandles(ledger: Ledger, name: string, more: readonly unknown[]): void {
  ledger.write(() => {
    const row = findPool(ledger, name);
    if (!row) return;
    const all = [...(JSON.parse(row.handles) as unknown[]), ...more];
    ledger.stmt('UPDATE pools SET handles = ? WHERE name = ?').run(JSON.stringify(all), name);
  });
}

/** The pools that are up, by name. */
export function upPools(ledger: Ledger): PoolRow[] {
  return ledger.stmt("SELECT * FROM pools WHERE state = 'up' ORDER BY name").all() as PoolRow[];
}

/** Set how many workers a pool wants. */
export function setPoolWorkers(ledger: Ledger, name: string, workers: number): void {
  ledger.write(() => ledger.stmt('UPDATE pools SET workers = ? WHERE name = ?').run(workers, name));
}

/** Take a pool down (it wants no workers), or mark one whose workers could not start as down. */
export function setPoolDown(ledger: Ledger, name: string, workersToo: boolean): void {
  ledger.write(() =>
    workersToo
      ? ledger.stmt("UPDATE pools SET state = 'down', workers = 0 WHERE name = ?").run(name)
      : ledger.stmt("UPDATE pools SET state = 'down' WHERE name = ?").run(name),
  );
}

/** The open launches on a pool. */
export function openLaunchesOnPool(ledger: Ledger, name: string): LaunchRow[] {
  return ledger
    .stmt('SELECT * FROM launches WHERE backend = ? AND open = 1')
    .all(poolRef(name)) as LaunchRow[];
}

/** A job's open pool launches, oldest first. */
export function openPoolLaunchesOfJob(ledger: Ledger, jobId: number): LaunchRow[] {
  return ledger
    .stmt('SELECT * FROM launches WHERE job_id = ? AND open = 1 AND backend LIKE ? ORDER BY id')
    .all(jobId, POOL_LAUNCHES_LIKE) as LaunchRow[];
}
