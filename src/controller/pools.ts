import fs from 'node:fs';
import { poolFiles, serverFiles } from '../backends/pool/server-info.js';
import {
  localWorkersAlive,
  parseMemMb,
  startWorkers,
  stopWorkers,
  type WorkerHandle,
  type WorkerSpec,
} from '../backends/pool/start.js';
import { type RegisteredWorker, workersOnTheirWay } from '../backends/pool/starting.js';
import { DroverError } from '../errors.js';
import type { LaunchRow } from '../ledger/launches.js';
import type { Ledger } from '../ledger/ledger.js';
import { cancelPoolTasks } from '../ledger/transitions.js';
import type { CreatePoolRequest, PoolStatus } from '../protocol/messages.js';
import { chooseToDrain } from './policy.js';
import { getPool, type PoolContext, type PoolRow } from './pool-row.js';
import { poolStatus } from './pool-status.js';
import { createToken, writeSecret } from './tokens.js';

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

function spec(ctx: PoolContext, p: PoolRow): WorkerSpec {
  const files = poolFiles(ctx.ledger.paths, p.name);
  const opts = JSON.parse(p.options) as Record<string, string>;
  return {
    pool: p.name,
    backend: p.backend,
    url: ctx.url,
    tokenFile: files.workerToken,
    serverFile: serverFiles(ctx.ledger.paths).info,
    cpus: p.cpus,
    gpus: p.gpus,
    ...(opts.mem !== undefined ? { mem: opts.mem } : {}),
    ...(p.duration !== null ? { duration: p.duration } : {}),
    slots: p.slots,
    ...(p.setup !== null ? { setup: p.setup } : {}),
    options: opts,
    cwd: ctx.cwd,
    dir: files.workersDir,
    node: ctx.node,
    bin: ctx.bin,
    heartbeat: ctx.controller.opts.heartbeat,
  };
}

function addHandles(ledger: Ledger, name: string, more: WorkerHandle[]): void {
  const row = getPool(ledger, name, false);
  const all = [...(JSON.parse(row.handles) as WorkerHandle[]), ...more];
  ledger.stmt('UPDATE pools SET handles = ? WHERE name = ?').run(JSON.stringify(all), name);
}

/** Create a pool (or bring a downed one up again with new settings) and start its workers. */
export function createPool(ctx: PoolContext, req: CreatePoolRequest): PoolStatus {
  if (!NAME.test(req.name)) {
    throw new DroverError(
      'usage',
      `pool name '${req.name}' is not valid: use letters, digits, _ . - (max 64)`,
    );
  }
  const old = ctx.ledger.stmt('SELECT state FROM pools WHERE name = ?').get(req.name) as
    | { state: string }
    | undefined;
  if (old?.state === 'up')
    throw new DroverError(
      'conflict',
      `pool '${req.name}' already exists: see drover pool status ${req.name}`,
    );
  const memMb = parseMemMb(req.mem);
  const files = poolFiles(ctx.ledger.paths, req.name);
  ctx.ledger.write(() => {
    ctx.ledger
      .stmt(
        `INSERT INTO pools (name, backend, workers, cpus, gpus, mem_mb, duration, slots, setup, state, created_at, handles, options)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'up', ?, '[]', ?)
         ON CONFLICT (name) DO UPDATE SET backend = excluded.backend, workers = excluded.workers, cpus = excluded.cpus,
           gpus = excluded.gpus, mem_mb = excluded.mem_mb, duration = excluded.duration, slots = excluded.slots,
           setup = excluded.setup, state = 'up', created_at = excluded.created_at, handles = '[]', options = excluded.options`,
      )
      .run(
        req.name,
        req.backend,
        req.workers,
        req.cpus,
        req.gpus ?? 0,
        memMb,
        req.duration ?? null,
        req.slots ?? req.cpus,
        req.setup ?? null,
        Date.now() / 1000,
        JSON.stringify({ ...req.options, ...(req.mem !== undefined ? { mem: req.mem } : {}) }),
      );
    const { token } = createToken(ctx.ledger, 'worker', `workers of pool ${req.name}`, req.name);
    writeSecret(files.workerToken, token);
  });
  const pool = getPool(ctx.ledger, req.name);
  try {
    addHandles(ctx.ledger, req.name, startWorkers(spec(ctx, pool), req.workers));
  } catch (err) {
    ctx.ledger.stmt("UPDATE pools SET state = 'down' WHERE name = ?").run(req.name);
    throw err;
  }
  return poolStatus(ctx, req.name);
}

/**
 * How many workers a pool has: live ones not asked to drain or stop, plus those started and not registered yet
 * that still may (starting.ts).
 */
function workersNow(ctx: PoolContext, pool: PoolRow) {
  const live = [...ctx.controller.workers.values()].filter(
    (w) => w.pool === pool.name && w.state !== 'lost' && w.state !== 'stopped' && w.stop === undefined,
  );
  const registered = ctx.ledger
    .stmt('SELECT host, pid, element FROM pool_workers WHERE pool = ? AND registered_at >= ?')
    .all(pool.name, pool.created_at) as RegisteredWorker[];
  const coming = workersOnTheirWay(JSON.parse(pool.handles) as WorkerHandle[], registered);
  return { live, coming };
}

/**
 * Change the number of workers: start as many as are missing (counting the live ones and those on their way,
 * never the lost or gone), or ask idle ones to drain and leave (the idlest first, then the oldest: chooseToDrain).
 */
export function scalePool(ctx: PoolContext, name: string, workers: number): PoolStatus {
  const pool = getPool(ctx.ledger, name);
  const { live, coming } = workersNow(ctx, pool);
  ctx.ledger.stmt('UPDATE pools SET workers = ? WHERE name = ?').run(workers, name);
  const have = live.length + coming;
  if (workers > have) addHandles(ctx.ledger, name, startWorkers(spec(ctx, pool), workers - have));
  else if (workers < have) {
    const drain = chooseToDrain(
      live.map((w) => ({ id: w.id, tasks: w.held.size, registeredAt: w.registeredAt })),
      Math.min(live.length, have - workers),
    );
    ctx.ledger.write(() => {
      for (const id of drain) {
        const w = ctx.controller.workers.get(id)!;
        w.stop = 'drain';
        w.state = 'draining';
        ctx.ledger.stmt("UPDATE pool_workers SET state = 'draining' WHERE id = ?").run(w.id);
        ctx.controller.poke(w);
      }
    });
    ctx.controller.schedule();
  }
  return poolStatus(ctx, name);
}

/** Open launches on a pool. */
function openLaunchesOn(ledger: Ledger, name: string): LaunchRow[] {
  return ledger
    .stmt('SELECT * FROM launches WHERE backend = ? AND open = 1')
    .all(`pool:${name}`) as LaunchRow[];
}

/**
 * Take a pool down: refused while its launches have tasks left, unless `force`, which cancels them. The
 * workers are asked to stop; those that have not left after `graceMs` are stopped by their backend.
 */
export function downPool(ctx: PoolContext, name: string, force: boolean, graceMs = 5000): PoolStatus {
  const pool = getPool(ctx.ledger, name);
  const open = openLaunchesOn(ctx.ledger, name).filter((l) => ctx.controller.launches.has(l.id));
  if (open.length > 0 && !force) {
    const left = open.reduce((n, l) => n + (ctx.controller.launches.get(l.id)?.remaining ?? 0), 0);
    throw new DroverError(
      'conflict',
      `pool '${name}' has ${left} task(s) of launch ${open.map((l) => l.id).join(', ')} not done: wait, cancel them, or add --force`,
    );
  }
  ctx.ledger.write(() => {
    for (const l of open) cancelPoolTasks(ctx.ledger, l, 'all');
    ctx.ledger.stmt("UPDATE pools SET state = 'down', workers = 0 WHERE name = ?").run(name);
  });
  ctx.controller.processCancels();
  for (const w of ctx.controller.workers.values()) {
    if (w.pool !== name || w.state === 'lost' || w.state === 'stopped') continue;
    w.stop = 'stop';
    ctx.controller.schedule();
  }
  for (const w of ctx.controller.workers.values()) if (w.pool === name) ctx.controller.poke(w);
  const handles = JSON.parse(pool.handles) as WorkerHandle[];
  // The workers report what they stopped, then leave; after the grace period the backend stops the rest and
  // the worker tokens this pool had are revoked — only those: a pool made again under the same name within
  // the grace period has a token of its own.
  const tokens = (
    ctx.ledger
      .stmt("SELECT id FROM server_tokens WHERE kind = 'worker' AND pool = ? AND revoked_at IS NULL")
      .all(name) as { id: string }[]
  ).map((t) => t.id);
  const finish = () => {
    pendingStops.delete(finish);
    clearTimeout(timer);
    if (handles.some((h) => h.kind !== 'local') || localWorkersAlive(handles)) stopWorkers(handles);
    const revoke = ctx.ledger.stmt(
      'UPDATE server_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL',
    );
    const at = Date.now() / 1000;
    ctx.ledger.write(() => {
      for (const id of tokens) revoke.run(at, id);
    });
  };
  const timer = setTimeout(finish, graceMs);
  timer.unref();
  pendingStops.add(finish);
  fs.rmSync(poolFiles(ctx.ledger.paths, name).workerToken, { force: true });
  return poolStatus(ctx, name);
}

/** Pools taken down whose workers' grace period is not over yet. */
const pendingStops = new Set<() => void>();

/** End the grace periods of pools taken down now (the controller is shutting down): stop their workers. */
export function finishPendingStops(): void {
  for (const f of [...pendingStops]) f();
}
