import type { RegisterRequest } from '../protocol/messages.js';
import type { LiveWorker } from './live.js';

/** A pool_workers row. */
export interface WorkerRow {
  id: string;
  pool: string;
  host: string;
  pid: number;
  cpus: number;
  gpus: number;
  mem_mb: number;
  slots: number;
  state: LiveWorker['state'];
  registered_at: number;
  last_seen: number;
  seq: number;
  reason: string | null;
  /** sha256 of its session secret, hex (null for rows made before secrets). */
  secret_hash: string | null;
  /** The scheduler array element it runs in (`A_I`, `J.T`), or null. */
  element: string | null;
}

/** The row of a worker the controller no longer knows (its tasks are requeued). */
export const GONE: WorkerRow = {
  id: '',
  pool: '',
  host: '?',
  pid: 0,
  cpus: 0,
  gpus: 0,
  mem_mb: 0,
  slots: 0,
  state: 'ready',
  registered_at: 0,
  last_seen: 0,
  seq: 0,
  reason: null,
  secret_hash: null,
  element: null,
};

/** The row fields a registration sets. */
export function rowOf(req: RegisterRequest): Partial<WorkerRow> {
  return {
    pool: req.pool,
    host: req.host,
    pid: req.pid,
    cpus: req.resources.cpus,
    gpus: req.resources.gpus,
    mem_mb: req.resources.mem_mb,
    slots: req.slots,
    element: req.element ?? null,
  };
}

/** A worker in memory from its row, last seen at `lastSeen`. */
export function newWorker(r: WorkerRow, lastSeen: number): LiveWorker {
  return {
    id: r.id,
    pool: r.pool,
    host: r.host,
    pid: r.pid,
    slots: r.slots,
    capacity: { cpus: r.cpus, gpus: r.gpus, mem_mb: r.mem_mb },
    state: r.state,
    registeredAt: r.registered_at,
    secretHash: r.secret_hash,
    element: r.element,
    lastSeen,
    reporting: false,
    held: new Map(),
    outTasks: [],
    outCancel: [],
    registered: false,
    sentSettings: new Set(),
  };
}
