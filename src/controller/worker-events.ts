import path from 'node:path';
import type { WorkerRow } from '../ledger/pool-workers.js';
import { attemptFile, segmentLogs } from '../protocol/log-slices.js';
import type { AttemptKey, RegisterRequest, ReportBatch } from '../protocol/messages.js';
import type { AttemptRecord, StartRecord } from '../protocol/records.js';
import { MIN_WORKER_SECRET_CHARS, newWorkerSecret } from '../protocol/worker-secret.js';
import { requeueOf } from '../runner/requeue.js';
import type { ControllerCore } from './core.js';
import { HttpError } from './http-error.js';
import { type HeldTask, type LiveLaunch, type LiveWorker, taskKey } from './live.js';
import { freshBatches, type HeldView, refusedRecords } from './report-check.js';
import { GONE, newWorker, rowOf } from './worker-row.js';
import { hashSecret, ownWorkerId, secretMatches } from './worker-secret.js';

/**
 * What workers tell the controller — their registration, and the records of their attempts — and the
 * decisions that follow, over the controller's core (core.ts). Refusals are HttpErrors with the API's codes.
 */

/** What a registration answers (besides the heartbeat interval). */
export interface Registered {
  id: string;
  /** Only to a worker that chose none (of an earlier version), on its first registration. */
  secret?: string;
  seq: number;
  /** Attempts it listed that are not its own (it stops them and drops their records). */
  disowned: AttemptKey[];
}

/** The worker row a registration again names, checked: it exists, the secret is its own, same pool. */
function resumedRow(c: ControllerCore, req: RegisterRequest & { id: string }): WorkerRow {
  const row = c.store.worker(req.id);
  if (!row) {
    throw new HttpError(
      409,
      'unknown-worker',
      `worker ${req.id} is not known to this controller: register without an id to get one`,
    );
  }
  if (!secretMatches(req.secret, row.secret_hash)) {
    throw new HttpError(
      403,
      'forbidden',
      `worker ${req.id} is registered to another process: only the worker holding its secret may register as it`,
    );
  }
  if (row.pool !== req.pool) {
    throw new HttpError(403, 'forbidden', `worker ${req.id} serves pool '${row.pool}', not '${req.pool}'`);
  }
  return row;
}

/**
 * A first registration with a secret the worker chose: the row a registration with that secret made, when this
 * one was sent again because its answer was lost (the worker never learned its id); undefined for a new worker.
 * Without it the worker would become a second one, and the first, never polling, would be handed tasks and be
 * taken for lost with them.
 */
function sentAgain(c: ControllerCore, req: RegisterRequest): WorkerRow | undefined {
  if (req.secret === undefined) return undefined;
  if (req.secret.length < MIN_WORKER_SECRET_CHARS) {
    throw new HttpError(
      400,
      'bad-request',
      `a worker's own secret has ${req.secret.length} characters: choose at least ${MIN_WORKER_SECRET_CHARS} random ones`,
    );
  }
  const row = c.store.worker(ownWorkerId(req.host, req.pid, req.secret));
  return row && row.pool === req.pool && secretMatches(req.secret, row.secret_hash) ? row : undefined;
}

/**
 * A worker registers: the first time (it gets an id bound to its secret), or again with both after the
 * controller or the network was away. Checks come first; the row and the reconciliation of what it holds are one
 * transaction.
 */
export function registerWorker(c: ControllerCore, req: RegisterRequest): Registered {
  const now = c.clock.now();
  const row = req.id !== undefined ? resumedRow(c, { ...req, id: req.id }) : sentAgain(c, req);
  // A worker of an earlier version chooses no secret: it is given one, shown once.
  const given = row || req.secret !== undefined ? undefined : newWorkerSecret();
  const secret = req.secret ?? given!;
  const state = req.setup ? 'setup' : 'ready';
  return c.store.transaction(() => {
    const id = row ? row.id : c.store.newWorkerId(req.host, req.pid, secret);
    const fields = rowOf(req, state);
    if (row) c.store.updateWorker(id, fields, now);
    else c.store.addWorker({ ...fields, id, pool: req.pool, secret_hash: hashSecret(secret) }, now);
    let w = c.workers.get(id);
    if (!w || w.state === 'lost' || w.state === 'stopped') {
      const held = w?.held ?? new Map<string, HeldTask>();
      const base: WorkerRow = row ?? {
        ...GONE,
        id,
        registered_at: now,
        secret_hash: hashSecret(secret),
      };
      w = newWorker({ ...base, ...fields, pool: req.pool, id }, now);
      w.held = held;
      c.workers.set(id, w);
    } else {
      Object.assign(w, { host: req.host, pid: req.pid, slots: req.slots, element: fields.element });
      w.capacity = { cpus: req.resources.cpus, gpus: req.resources.gpus, mem_mb: req.resources.mem_mb };
    }
    const disowned = reconcile(c, w, req, row?.state === 'draining', state);
    c.log.info({ event: 'worker-register', worker: id, pool: w.pool, host: w.host, pid: w.pid });
    if (disowned.length > 0) c.log.warn({ event: 'worker-disowned', worker: id, attempts: disowned.length });
    c.signals.dispatchSoon();
    return { id, ...(given !== undefined ? { secret: given } : {}), seq: row?.seq ?? 0, disowned };
  });
}

/**
 * After a registration: its state, and what it holds against what the controller gave it. Returns the attempts it
 * holds that are not its own: it stops them before it polls again, so no task handed to it later (a retry of one
 * of them) is mistaken for them. Listed without an attempt (a worker of an earlier version), such a task is
 * cancelled through its next poll instead.
 */
function reconcile(
  c: ControllerCore,
  w: LiveWorker,
  req: RegisterRequest,
  wasDraining: boolean,
  state: 'setup' | 'ready',
): AttemptKey[] {
  // A worker asked to drain before a restart still drains.
  if (wasDraining && w.stop === undefined) w.stop = 'drain';
  w.state = w.stop === 'drain' ? 'draining' : state;
  if (w.state === 'draining') c.store.setWorkerState(w.id, 'draining');
  w.lastSeen = c.clock.now();
  w.registered = true;
  w.sentSettings.clear();
  // What waited to be sent to it before it registered is taken as never sent: held tasks not in its list
  // go back to the queue below.
  w.outTasks = [];
  w.outCancel = [];
  // Tasks we handed it that it does not have never reached it (the answer was lost): hand them out again.
  const holding = new Map(req.holding.map((k) => [taskKey(k.launch, k.task), k.attempt]));
  const has = (key: string, attempt: number) =>
    holding.has(key) && (holding.get(key) === undefined || holding.get(key) === attempt);
  for (const [key, h] of w.held) {
    if (has(key, h.attempt)) continue;
    w.held.delete(key);
    const l = c.launches.get(h.launch);
    if (!l) continue;
    l.inFlight--;
    if (h.started) c.endTask(l, h.task, h.attempt, 'lost', `worker ${w.id} no longer has it`);
    else c.requeueUnstarted(l, h.task);
  }
  // Attempts it has that are not its own (any more): it stops them.
  const disowned: AttemptKey[] = [];
  for (const k of req.holding) {
    const h = w.held.get(taskKey(k.launch, k.task));
    if (h && (k.attempt === undefined || k.attempt === h.attempt)) continue;
    if (k.attempt === undefined) w.outCancel.push({ launch: k.launch, task: k.task });
    else disowned.push({ launch: k.launch, task: k.task, attempt: k.attempt });
  }
  return disowned;
}

/**
 * Where an attempt's output is: always under its launch's log folder, named by the controller. Its own files, or
 * (the launch keeps segments and the worker says where the attempt begins in them) the segments of the worker's
 * slot, named by the worker's id: a worker can only point at its own segments, and only for its own attempts.
 */
function logPaths(
  w: LiveWorker,
  l: LiveLaunch,
  r: StartRecord,
): Pick<StartRecord, 'out' | 'err' | 'out_off' | 'err_off' | 'seq'> {
  const dir = l.settings.logDir;
  if (l.settings.logs !== 'segments')
    return {
      out: attemptFile(dir, r.task, r.attempt, 'out'),
      err: attemptFile(dir, r.task, r.attempt, 'err'),
    };
  const slotOk = Number.isSafeInteger(r.slot) && r.slot >= 0 && r.slot < Math.max(1, w.slots);
  if (!slotOk || r.out_off === undefined || r.err_off === undefined || r.seq === undefined)
    return { out: '', err: '' };
  return segmentLogs(path.join(dir, w.id), r.slot, { outOff: r.out_off, errOff: r.err_off, seq: r.seq });
}

/** A worker's records as the ledger takes them: only their known fields; host and log paths are the controller's. */
function ownRecords(w: LiveWorker, l: LiveLaunch, records: readonly AttemptRecord[]): AttemptRecord[] {
  return records.map((r): AttemptRecord => {
    if (r.type === 'start') {
      return {
        type: 'start',
        task: r.task,
        attempt: r.attempt,
        at: r.at,
        pid: r.pid,
        slot: r.slot,
        gpus: r.gpus,
        host: w.host,
        ...logPaths(w, l, r),
      };
    }
    if (r.type === 'end') {
      return {
        type: 'end',
        task: r.task,
        attempt: r.attempt,
        at: r.at,
        state: r.state,
        exit_code: r.exit_code,
        signal: r.signal,
        ...(r.reason !== undefined ? { reason: r.reason } : {}),
        ...(l.settings.logs === 'segments' && r.out_end !== undefined && r.err_end !== undefined
          ? { out_end: r.out_end, err_end: r.err_end }
          : {}),
      };
    }
    return r;
  });
}

/**
 * `--requeue` on a pool: the controller, not the worker's runner, decides which ended attempts run again (by the
 * runner's rule, runner/requeue.ts) and says so in their end records (`requeue`, the reason), as a runner does
 * for its own; `requeued` gets their tasks. A worker's own `requeue` field never reaches here (ownRecords).
 */
function requeues(
  c: ControllerCore,
  l: LiveLaunch,
  records: AttemptRecord[],
  requeued: Set<number>,
): AttemptRecord[] {
  if (!l.settings.requeue) return records;
  return records.map((r) => {
    if (r.type !== 'end') return r;
    const fields = {
      state: r.state,
      exit_code: r.exit_code,
      signal: r.signal,
      ...(r.reason !== undefined ? { reason: r.reason } : {}),
    };
    const d = requeueOf(l.settings, fields, r.state === 'timeout', c.store.requeues(l, r.task), true);
    if (d.requeue) requeued.add(r.task);
    return { ...r, ...d.end, ...(d.requeue ? { requeue: true } : {}) };
  });
}

/** A worker's report as it arrived. */
export interface Report {
  w: LiveWorker;
  batches: ReportBatch[];
}

/** A report whose records all belong to its worker: the batches not applied before. */
interface CheckedReport {
  w: LiveWorker;
  fresh: ReportBatch[];
  applied: number;
}

/**
 * Check a report before anything is applied: the batches after the last applied sequence number, every record of
 * an attempt the worker holds (else 403 `not-yours`, naming them).
 */
function checkReport(c: ControllerCore, { w, batches }: Report): CheckedReport {
  const applied = c.store.workerSeq(w.id);
  const fresh = freshBatches(batches, applied);
  const held = new Map<string, HeldView>();
  for (const [k, h] of w.held) held.set(k, { attempt: h.attempt, started: h.started });
  const refused = refusedRecords(fresh, held, new Set(c.launches.keys()));
  if (refused.length > 0) {
    const first = refused[0]!;
    throw new HttpError(
      403,
      'not-yours',
      `worker ${w.id} reported ${refused.length} attempt(s) it does not hold (first: launch ${first.launch} task ${first.task} attempt ${first.attempt}): nothing of the report was applied; leave them out`,
      refused,
    );
  }
  return { w, fresh, applied };
}

/** Apply a checked report's batches (inside the transaction); its last sequence number. */
function applyChecked(c: ControllerCore, r: CheckedReport, now: number, changed: Set<LiveLaunch>): number {
  const { w, fresh } = r;
  for (const b of fresh) {
    const l = c.launches.get(b.launch)!;
    const requeued = new Set<number>();
    const records = requeues(c, l, ownRecords(w, l, b.records), requeued);
    const done = c.store.applyRecords(l, records);
    for (const x of done.refused) {
      c.log.warn({
        event: 'record-refused',
        worker: w.id,
        launch: l.id,
        task: x.move.task,
        from: x.move.from,
        to: x.move.to,
      });
    }
    changed.add(l);
    for (const s of done.started) {
      const h = w.held.get(taskKey(l.id, s.task))!;
      h.started = true;
      h.startedAt = s.at;
    }
    for (const e of done.ended) {
      const h = w.held.get(taskKey(l.id, e.task))!;
      w.held.delete(taskKey(l.id, e.task));
      l.inFlight--;
      if (h.startedAt !== undefined && e.state !== 'cancelled') {
        const d = e.at - h.startedAt;
        l.avgSeconds = l.avgSeconds === undefined ? d : 0.8 * l.avgSeconds + 0.2 * d;
      }
      c.endTask(l, e.task, h.attempt, e.state, undefined, requeued.has(e.task));
    }
  }
  const last = fresh[fresh.length - 1]!.seq;
  c.store.setWorkerSeq(w.id, last, now);
  return last;
}

/**
 * Apply the reports that arrived together (each from a different worker: a worker has one in flight at most), in
 * one transaction: a commit costs about as much as applying a report of ~30 tasks, so reports that come together
 * share it (issue 14 §5). Each report is checked on its own first: one refused (403 `not-yours`) changes nothing
 * and keeps none of the others from being applied. Returns each report's answer, or the error to answer it with.
 */
export function applyReports(c: ControllerCore, reports: readonly Report[]): ({ seq: number } | Error)[] {
  const out: ({ seq: number } | Error)[] = [];
  const ready: { i: number; r: CheckedReport }[] = [];
  const now = c.clock.now();
  reports.forEach((report, i) => {
    try {
      const r = checkReport(c, report);
      report.w.lastSeen = now;
      if (r.fresh.length === 0) out[i] = { seq: r.applied };
      else ready.push({ i, r });
    } catch (err) {
      out[i] = err instanceof Error ? err : new Error(String(err));
    }
  });
  if (ready.length === 0) return out;
  const changed = new Set<LiveLaunch>();
  try {
    const seqs = c.store.transaction(() => ready.map(({ r }) => applyChecked(c, r, now, changed)));
    ready.forEach(({ i }, k) => {
      out[i] = { seq: seqs[k]! };
    });
  } catch (err) {
    for (const { i } of ready) out[i] = err instanceof Error ? err : new Error(String(err));
  }
  for (const l of changed) c.afterChange(l);
  c.signals.dispatchSoon();
  return out;
}

/**
 * Apply one worker's report: the batches after the last applied sequence number, in one transaction — when every
 * record in them is of an attempt the worker holds (else 403 `not-yours`, naming them, and nothing changes).
 */
export function applyReport(c: ControllerCore, w: LiveWorker, batches: ReportBatch[]): { seq: number } {
  const answer = applyReports(c, [{ w, batches }])[0]!;
  if (answer instanceof Error) throw answer;
  return answer;
}
