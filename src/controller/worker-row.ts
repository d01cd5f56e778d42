import type { WorkerFields, WorkerRow } from '../ledger/pool-workers.js';
import type { RegisterRequest } from '../protocol/messages.js';
import type { LiveWorker } from './live.js';

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

/** The row fields a registration sets, in state `state`. */
export function rowOf(req: RegisterRequest, state: WorkerRow['state']): WorkerFields {
  return {
    host: req.host,
    pid: req.pid,
    cpus: req.resources.cpus,
    gpus: req.resources.gpus,
    mem_mb: req.resources.mem_mb,
    slots: req.slots,
    element: req.element ?? null,
    state,
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
