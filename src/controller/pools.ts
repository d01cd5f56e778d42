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
import { backendConfig } from '../config/config.js';
import { DroverError } from '../errors.js';
import type { Ledger } from '../ledger/ledger.js';
import { forgiveFailures } from '../ledger/pool-allocations.js';
import { registeredSince } from '../ledger/pool-workers.js';
import {
  addPoolHandles,
  findPool,
  openLaunchesOnPool,
  setPoolDown,
  setPoolWorkers,
  upsertPool,
} from '../ledger/pools.js';
import { poolWorkerTokenIds, revokeTokens } from '../ledger/server-tokens.js';
import { cancelPoolTasks } from '../ledger/transitions.js';
import type { CreatePoolRequest, PoolStatus } from '../protocol/messages.js';
import { autoSettings } from './auto-settings.js';
import { chooseToDrain } from './policy.js';
import { drainWorkers, stopPoolWorkers } from './pool-commands.js';
import { getPool, type PoolContext, type PoolRow } from './pool-row.js';
import { poolStatus } from './pool-status.js';
import { createToken, writeSecret } from './tokens.js';

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** What a pool's workers are started with, from its row. */
export function workerSpec(ctx: PoolContext, p: PoolRow): WorkerSpec {
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
    config: p.backend === 'local' ? {} : backendConfig(ctx.ledger.paths.localConfig, p.backend),
    cwd: ctx.cwd,
    dir: files.workersDir,
    node: ctx.node,
    bin: ctx.bin,
    heartbeat: ctx.controller.opts.heartbeat,
  };
}

function addHandles(ledger: Ledger, name: string, more: WorkerHandle[]): void {
  getPool(ledger, name, false);
  addPoolHandles(ledger, name, more);
}

/**
 * The changes to each pool's workers (create, scale, down) in the order asked, one at a time: a change counts
 * the workers on their way, and those of a change still submitting (an sbatch or qsub in flight) are not yet
 * among them — two scales at once would each start the missing workers.
 */
const changing = new Map<string, Promise<unknown>>();

/** Run `change` of pool `name` after the changes of that pool asked before it have ended. */
export function inTurn<T>(name: string, change: () => Promise<T> | T): Promise<T> {
  const before = changing.get(name) ?? Promise.resolve();
  const mine = before.then(change, change);
  const settled = mine.catch(() => {});
  changing.set(name, settled);
  void settled.then(() => {
    if (changing.get(name) === settled) changing.delete(name);
  });
  return mine;
}

/** Create a pool (or bring a downed one up again with new settings) and start its workers. */
export function createPool(ctx: PoolContext, req: CreatePoolRequest): Promise<PoolStatus> {
  return inTurn(req.name, () => create(ctx, req));
}

async function create(ctx: PoolContext, req: CreatePoolRequest): Promise<PoolStatus> {
  if (!NAME.test(req.name)) {
    throw new DroverError(
      'usage',
      `pool name '${req.name}' is not valid: use letters, digits, _ . - (max 64)`,
    );
  }
  if (findPool(ctx.ledger, req.name)?.state === 'up')
    throw new DroverError(
      'conflict',
      `pool '${req.name}' already exists: see drover pool status ${req.name}`,
    );
  const auto = autoSettings(req);
  const memMb = parseMemMb(req.mem);
  const files = poolFiles(ctx.ledger.paths, req.name);
  ctx.ledger.write(() => {
    upsertPool(ctx.ledger, {
      name: req.name,
      backend: req.backend,
      workers: auto ? 0 : req.workers,
      cpus: req.cpus,
      gpus: req.gpus ?? 0,
      mem_mb: memMb,
      duration: req.duration ?? null,
      slots: req.slots ?? req.cpus,
      setup: req.setup ?? null,
      created_at: Date.now() / 1000,
      options: JSON.stringify({ ...req.options, ...(req.mem !== undefined ? { mem: req.mem } : {}) }),
      auto: auto ? JSON.stringify(auto) : null,
    });
    const { token } = createToken(ctx.ledger, 'worker', `workers of pool ${req.name}`, req.name);
    writeSecret(files.workerToken, token);
  });
  const pool = getPool(ctx.ledger, req.name);
  setTimeLimit(ctx, pool);
  if (auto) {
    ctx.auto?.soon();
    return poolStatus(ctx, req.name);
  }
  try {
    addHandles(ctx.ledger, req.name, await startWorkers(workerSpec(ctx, pool), req.workers));
  } catch (err) {
    setPoolDown(ctx.ledger, req.name, false);
    throw err;
  }
  return poolStatus(ctx, req.name);
}

/**
 * How many workers a pool has: live ones not asked to drain or stop, plus those started and not registered yet
 * that still may (starting.ts).
 */
async function workersNow(ctx: PoolContext, pool: PoolRow) {
  const live = [...ctx.controller.workers.values()].filter(
    (w) => w.pool === pool.name && w.state !== 'lost' && w.state !== 'stopped' && w.stop === undefined,
  );
  const registered: RegisteredWorker[] = registeredSince(ctx.ledger, pool.name, pool.created_at);
  const coming = await workersOnTheirWay(JSON.parse(pool.handles) as WorkerHandle[], registered);
  return { live, coming };
}

/**
 * Change the number of workers: start as many as are missing (counting the live ones and those on their way,
 * never the lost or gone), or ask idle ones to drain and leave (the idlest first, then the oldest: chooseToDrain).
 */
export function scalePool(ctx: PoolContext, name: string, workers: number): Promise<PoolStatus> {
  return inTurn(name, () => scale(ctx, name, workers));
}

async function scale(ctx: PoolContext, name: string, workers: number): Promise<PoolStatus> {
  const pool = getPool(ctx.ledger, name);
  if (pool.auto !== null)
    throw new DroverError(
      'conflict',
      `pool '${name}' starts its workers by itself (--auto): take it down and create it again to change its limits`,
    );
  const { live, coming } = await workersNow(ctx, pool);
  setPoolWorkers(ctx.ledger, name, workers);
  const have = live.length + coming;
  if (workers > have) addHandles(ctx.ledger, name, await startWorkers(workerSpec(ctx, pool), workers - have));
  else if (workers < have) {
    const drain = chooseToDrain(
      live.map((w) => ({ id: w.id, tasks: w.held.size, registeredAt: w.registeredAt })),
      Math.min(live.length, have - workers),
    );
    drainWorkers(ctx.controller.core, drain);
  }
  return poolStatus(ctx, name);
}

/**
 * Take a pool down: refused while its launches have tasks left, unless `force`, which cancels them. The
 * workers are asked to stop; those that have not left after `graceMs` are stopped by their backend.
 */
export function downPool(
  ctx: PoolContext,
  name: string,
  force: boolean,
  graceMs = 5000,
): Promise<PoolStatus> {
  return inTurn(name, () => down(ctx, name, force, graceMs));
}

function down(ctx: PoolContext, name: string, force: boolean, graceMs: number): PoolStatus {
  const pool = getPool(ctx.ledger, name);
  const open = openLaunchesOnPool(ctx.ledger, name).filter((l) => ctx.controller.launches.has(l.id));
  if (open.length > 0 && !force) {
    const left = open.reduce((n, l) => n + (ctx.controller.launches.get(l.id)?.remaining ?? 0), 0);
    throw new DroverError(
      'conflict',
      `pool '${name}' has ${left} task(s) of launch ${open.map((l) => l.id).join(', ')} not done: wait, cancel them, or add --force`,
    );
  }
  ctx.ledger.write(() => {
    for (const l of open) cancelPoolTasks(ctx.ledger, l, 'all');
    setPoolDown(ctx.ledger, name, true);
  });
  ctx.controller.processCancels();
  stopPoolWorkers(ctx.controller.core, name);
  const handles = JSON.parse(pool.handles) as WorkerHandle[];
  // The workers report what they stopped, then leave; after the grace period the backend stops the rest and
  // the worker tokens this pool had are revoked — only those: a pool made again under the same name within
  // the grace period has a token of its own.
  const tokens = poolWorkerTokenIds(ctx.ledger, name);
  const finish = async () => {
    pendingStops.delete(finish);
    clearTimeout(timer);
    revokeTokens(ctx.ledger, tokens, Date.now() / 1000);
    if (handles.some((h) => h.kind !== 'local') || localWorkersAlive(handles)) await stopWorkers(handles);
  };
  const timer = setTimeout(() => {
    finish().catch((err) =>
      ctx.controller.opts.log.error({ event: 'pool-stop-failed', pool: name, err: String(err) }),
    );
  }, graceMs);
  timer.unref();
  pendingStops.add(finish);
  fs.rmSync(poolFiles(ctx.ledger.paths, name).workerToken, { force: true });
  return poolStatus(ctx, name);
}

/** Tell dispatch the pool's worker time limit (none: forget it), counted from each worker's registration. */
export function setTimeLimit(ctx: PoolContext, pool: PoolRow): void {
  if (pool.duration !== null) ctx.controller.core.timeLimits.set(pool.name, pool.duration);
  else ctx.controller.core.timeLimits.delete(pool.name);
}

/** `pool resume`: allocations that failed to start before now no longer pause the pool; it looks again at once. */
export function resumePool(ctx: PoolContext, name: string): Promise<PoolStatus> {
  return inTurn(name, () => {
    const pool = getPool(ctx.ledger, name);
    if (pool.auto === null)
      throw new DroverError('usage', `pool '${name}' has no --auto: there is nothing to resume`);
    forgiveFailures(ctx.ledger, name);
    ctx.auto?.resumed(name);
    return poolStatus(ctx, name);
  });
}

/** Pools taken down whose workers' grace period is not over yet. */
const pendingStops = new Set<() => Promise<void>>();

/** End the grace periods of pools taken down now (the controller is shutting down): stop their workers. */
export async function finishPendingStops(): Promise<void> {
  await Promise.all([...pendingStops].map((f) => f()));
}
