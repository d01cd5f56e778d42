import type { RegisterRequest, ReportBatch } from '../protocol/messages.js';
import type { Controller } from './controller.js';
import { type HeldTask, type LiveLaunch, taskKey } from './live.js';
import { applyRecords } from './store.js';
import { GONE, newWorker, rowOf, type WorkerRow } from './worker-row.js';

/** What workers tell the controller: their registration, and the records of their attempts. */

/** A worker registers (first time, or again after the controller or the network was away). */
export function registerWorker(c: Controller, req: RegisterRequest): { seq: number } {
  const now = Date.now() / 1000;
  const row = c.ledger.stmt('SELECT * FROM pool_workers WHERE id = ?').get(req.id) as WorkerRow | undefined;
  const state = req.setup ? 'setup' : 'ready';
  c.ledger
    .stmt(
      `INSERT INTO pool_workers (id, pool, host, pid, cpus, gpus, mem_mb, slots, state, registered_at, last_seen)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET host = excluded.host, pid = excluded.pid, cpus = excluded.cpus,
         gpus = excluded.gpus, mem_mb = excluded.mem_mb, slots = excluded.slots, state = excluded.state,
         last_seen = excluded.last_seen, reason = NULL`,
    )
    .run(
      req.id,
      req.pool,
      req.host,
      req.pid,
      req.resources.cpus,
      req.resources.gpus,
      req.resources.mem_mb,
      req.slots,
      state,
      now,
      now,
    );
  let w = c.workers.get(req.id);
  if (!w || w.state === 'lost' || w.state === 'stopped') {
    const held = w?.held ?? new Map<string, HeldTask>();
    w = newWorker({ ...(row ?? GONE), ...rowOf(req), state }, now);
    w.held = held;
    c.workers.set(w.id, w);
  }
  // A worker asked to drain before a restart still drains.
  if (row?.state === 'draining' && w.stop === undefined) w.stop = 'drain';
  w.state = w.stop === 'drain' ? 'draining' : state;
  if (w.state === 'draining')
    c.ledger.stmt("UPDATE pool_workers SET state = 'draining' WHERE id = ?").run(w.id);
  w.lastSeen = now;
  w.registered = true;
  w.sentSettings.clear();
  // What waited to be sent to it before it registered is taken as never sent: held tasks not in its list
  // go back to the queue below.
  w.outTasks = [];
  w.outCancel = [];
  // Tasks we handed it that it does not have never reached it (the answer was lost): hand them out again.
  const holding = new Set(req.holding.map((k) => taskKey(k.launch, k.task)));
  c.ledger.write(() => {
    for (const [key, h] of w.held) {
      if (holding.has(key)) continue;
      w.held.delete(key);
      const l = c.launches.get(h.launch);
      if (!l) continue;
      l.inFlight--;
      if (h.started) c.endTask(l, h.task, h.attempt, 'lost', `worker ${w.id} no longer has it`);
      else c.requeueUnstarted(l, h.task);
    }
  });
  // Tasks it has that are not its own any more (it was taken for lost meanwhile): stop them.
  for (const k of req.holding) if (!w.held.has(taskKey(k.launch, k.task))) w.outCancel.push(k);
  c.opts.log.info({ event: 'worker-register', worker: w.id, pool: w.pool, host: w.host, pid: w.pid });
  c.schedule();
  return { seq: row?.seq ?? 0 };
}

/** Apply a worker's report: batches after the last applied sequence number, in one transaction. */
export function applyReport(c: Controller, id: string, batches: ReportBatch[]): { seq: number } {
  const w = c.liveWorker(id);
  const now = Date.now() / 1000;
  w.lastSeen = now;
  const changed = new Set<LiveLaunch>();
  const seq = c.ledger.write(() => {
    let seq = (c.ledger.stmt('SELECT seq FROM pool_workers WHERE id = ?').get(id) as { seq: number }).seq;
    for (const b of [...batches].sort((x, y) => x.seq - y.seq)) {
      if (b.seq <= seq) continue;
      seq = b.seq;
      const l = c.launches.get(b.launch);
      const jobId =
        l?.jobId ??
        (
          c.ledger.stmt('SELECT job_id FROM launches WHERE id = ?').get(b.launch) as
            | { job_id: number }
            | undefined
        )?.job_id;
      if (jobId === undefined) continue;
      const applied = applyRecords(c.ledger, jobId, b.launch, b.records);
      if (!l) continue;
      changed.add(l);
      for (const s of applied.started) {
        const h = w.held.get(taskKey(l.id, s.task));
        if (h && h.attempt === s.attempt) {
          h.started = true;
          h.startedAt = s.at;
        }
      }
      for (const e of applied.ended) {
        const h = w.held.get(taskKey(l.id, e.task));
        if (!h || (e.attempt !== 0 && h.attempt !== e.attempt)) continue; // a late record of an older attempt
        w.held.delete(taskKey(l.id, e.task));
        l.inFlight--;
        if (h.startedAt !== undefined && e.state !== 'cancelled') {
          const d = e.at - h.startedAt;
          l.avgSeconds = l.avgSeconds === undefined ? d : 0.8 * l.avgSeconds + 0.2 * d;
        }
        c.endTask(l, e.task, h.attempt, e.state);
      }
    }
    c.ledger.stmt('UPDATE pool_workers SET seq = ?, last_seen = ? WHERE id = ?').run(seq, now, id);
    return seq;
  });
  for (const l of changed) c.afterChange(l);
  c.schedule();
  return { seq };
}
