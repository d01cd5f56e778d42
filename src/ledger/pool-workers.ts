import type { Ledger } from './ledger.js';

/** The rows of pool workers (pool_workers): who registered, with what, and how it is now. */

/** A pool worker's state (the pool_workers CHECK). */
export type WorkerState = 'setup' | 'ready' | 'draining' | 'lost' | 'stopped';

/** A pool_workers row. */
export interface WorkerRow {
  /** Issued by the controller at the first registration, kept across reconnects. */
  id: string;
  pool: string;
  host: string;
  pid: number;
  cpus: number;
  gpus: number;
  /** 0: not tracked. */
  mem_mb: number;
  slots: number;
  state: WorkerState;
  /** Unix seconds of its first registration. */
  registered_at: number;
  /** Unix seconds of its last request. */
  last_seen: number;
  /** The last report sequence number applied (replays are skipped). */
  seq: number;
  /** Why it is lost or stopped. */
  reason: string | null;
  /** sha256 of its session secret, hex (null for rows made before secrets). */
  secret_hash: string | null;
  /** The scheduler array element it runs in (`A_I`, `J.T`), or null. */
  element: string | null;
}

/** What a registration writes into a worker's row. */
export type WorkerFields = Pick<
  WorkerRow,
  'host' | 'pid' | 'cpus' | 'gpus' | 'mem_mb' | 'slots' | 'state' | 'element'
>;

/** A worker's row, or undefined. */
export function getWorkerRow(ledger: Ledger, id: string): WorkerRow | undefined {
  return ledger.stmt('SELECT * FROM pool_workers WHERE id = ?').get(id) as WorkerRow | undefined;
}

/** The rows of workers not lost or stopped. */
export function liveWorkerRows(ledger: Ledger): WorkerRow[] {
  return ledger
    .stmt("SELECT * FROM pool_workers WHERE state IN ('setup', 'ready', 'draining')")
    .all() as WorkerRow[];
}

/** A new worker's row. */
export function insertWorker(
  ledger: Ledger,
  row: WorkerFields & Pick<WorkerRow, 'id' | 'pool' | 'secret_hash'>,
  now: number,
): void {
  ledger.write(() =>
    ledger
      .stmt(
        `INSERT INTO pool_workers (id, pool, host, pid, cpus, gpus, mem_mb, slots, state, registered_at, last_seen,
           secret_hash, element) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        row.id,
        row.pool,
        row.host,
        row.pid,
        row.cpus,
        row.gpus,
        row.mem_mb,
        row.slots,
        row.state,
        now,
        now,
        row.secret_hash,
        row.element,
      ),
  );
}

/** A worker registered again: its row takes what it says now, and forgets why it was gone. */
export function updateWorker(ledger: Ledger, id: string, f: WorkerFields, now: number): void {
  ledger.write(() =>
    ledger
      .stmt(
        `UPDATE pool_workers SET host = ?, pid = ?, cpus = ?, gpus = ?, mem_mb = ?, slots = ?, state = ?,
           last_seen = ?, reason = NULL, element = ? WHERE id = ?`,
      )
      .run(f.host, f.pid, f.cpus, f.gpus, f.mem_mb, f.slots, f.state, now, f.element, id),
  );
}

/** Set a worker's state (and why, for lost and stopped). */
export function setWorkerState(ledger: Ledger, id: string, state: WorkerState, reason?: string): void {
  ledger.write(() => {
    if (reason === undefined) ledger.stmt('UPDATE pool_workers SET state = ? WHERE id = ?').run(state, id);
    else ledger.stmt('UPDATE pool_workers SET state = ?, reason = ? WHERE id = ?').run(state, reason, id);
  });
}

/** The last report sequence number applied for a worker. */
export function workerSeq(ledger: Ledger, id: string): number {
  return (
    (ledger.stmt('SELECT seq FROM pool_workers WHERE id = ?').get(id) as { seq: number } | undefined)?.seq ??
    0
  );
}

/** A worker's report up to `seq` was applied, at `now`. */
export function setWorkerSeq(ledger: Ledger, id: string, seq: number, now: number): void {
  ledger.write(() =>
    ledger.stmt('UPDATE pool_workers SET seq = ?, last_seen = ? WHERE id = ?').run(seq, now, id),
  );
}

/** True when some worker has this id. */
export function workerIdTaken(ledger: Ledger, id: string): boolean {
  return ledger.stmt('SELECT 1 FROM pool_workers WHERE id = ?').get(id) !== undefined;
}

/** Where the workers of a pool registered since `since` run (to tell which started workers are still coming). */
export function registeredSince(
  ledger: Ledger,
  pool: string,
  since: number,
): { host: string; pid: number; element: string | null }[] {
  return ledger
    .stmt('SELECT host, pid, element FROM pool_workers WHERE pool = ? AND registered_at >= ?')
    .all(pool, since) as { host: string; pid: number; element: string | null }[];
}

/** The lost and stopped workers of a pool registered since `since`, the most recently seen first. */
export function goneWorkers(
  ledger: Ledger,
  pool: string,
  since: number,
): Pick<WorkerRow, 'id' | 'host' | 'pid' | 'state' | 'slots' | 'last_seen' | 'reason'>[] {
  return ledger
    .stmt(
      `SELECT id, host, pid, state, slots, last_seen, reason FROM pool_workers
       WHERE pool = ? AND registered_at >= ? AND state IN ('lost', 'stopped') ORDER BY last_seen DESC, id`,
    )
    .all(pool, since) as Pick<
    WorkerRow,
    'id' | 'host' | 'pid' | 'state' | 'slots' | 'last_seen' | 'reason'
  >[];
}

/** Every worker of a pool registered since `since`: its element, state and why it left (automatic allocation). */
export function poolWorkerElements(
  ledger: Ledger,
  pool: string,
  since: number,
): Pick<WorkerRow, 'id' | 'element' | 'state' | 'reason'>[] {
  return ledger
    .stmt('SELECT id, element, state, reason FROM pool_workers WHERE pool = ? AND registered_at >= ?')
    .all(pool, since) as Pick<WorkerRow, 'id' | 'element' | 'state' | 'reason'>[];
}
