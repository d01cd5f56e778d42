import type { RegisterRequest } from '../protocol/messages.js';
import type { LiveWorker } from './live.js';

/** A worker is not registered (or was taken for lost): it must register again. */
export class UnknownWorker extends Error {
  constructor(readonly id: string) {
    super(`worker ${id} is not registered (or was taken for lost): register again`);
  }
}

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
};

/** The row fields a registration sets. */
export function rowOf(req: RegisterRequest): Partial<WorkerRow> {
  return {
    id: req.id,
    pool: req.pool,
    host: req.host,
    pid: req.pid,
    cpus: req.resources.cpus,
    gpus: req.resources.gpus,
    mem_mb: req.resources.mem_mb,
    slots: req.slots,
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
    lastSeen,
    held: new Map(),
    outTasks: [],
    outCancel: [],
    registered: false,
    sentSettings: new Set(),
  };
}
