import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Ledger } from '../ledger/ledger.js';
import { WORKER_SECRET_HEADER } from '../protocol/messages.js';
import { HttpError } from './http.js';
import type { PoolContext } from './pool-row.js';

/**
 * Worker identity: the controller gives each worker an id and a session secret at its first registration and
 * keeps only the secret's sha256 (pool_workers.secret_hash). Every later request of the worker carries the
 * secret (header `drover-worker-secret`, or in the body of a registration again): a worker token lets its holder
 * register workers of its pool, never speak for one it did not register.
 */

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** A new session secret (shown to the worker once). */
export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** The stored form of a secret. */
export function hashSecret(secret: string): string {
  return sha256(secret);
}

/** True when `secret` is the one whose hash is `hash` (constant time). */
export function secretMatches(secret: string | undefined, hash: string | null): boolean {
  if (secret === undefined || hash === null || secret.length > 256) return false;
  const a = Buffer.from(sha256(secret), 'hex');
  const b = Buffer.from(hash, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}

/** A new worker id: readable (`host-pid-xxxxxxxx`), unique in the ledger. */
export function newWorkerId(ledger: Ledger, host: string, pid: number): string {
  const name = host.replace(/[^A-Za-z0-9.-]/g, '').slice(0, 40) || 'worker';
  for (;;) {
    const id = `${name}-${pid}-${randomBytes(4).toString('hex')}`;
    if (!ledger.stmt('SELECT 1 FROM pool_workers WHERE id = ?').get(id)) return id;
  }
}

/**
 * Route hook of `/v1/workers/:id/...`: the request must carry the secret of worker `:id`, a worker of the token's
 * pool. Unknown id: 409 `unknown-worker` (register again); wrong or missing secret, or another pool: 403. A
 * worker the controller took for lost or that left is 409 `unknown-worker` too, after its secret was checked.
 * Sets `req.worker` to the live worker. Nothing is read from the body (it is not read yet).
 */
export function authWorker(ctx: PoolContext, opts: { mayBeGone?: boolean } = {}) {
  return async (req: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    const id = (req.params as { id: string }).id;
    const live = ctx.controller.workers.get(id);
    const row = live
      ? { pool: live.pool, secret_hash: live.secretHash }
      : (ctx.ledger.stmt('SELECT pool, secret_hash FROM pool_workers WHERE id = ?').get(id) as
          | { pool: string; secret_hash: string | null }
          | undefined);
    if (!row) {
      throw new HttpError(409, 'unknown-worker', `worker ${id} is not registered here: register again`);
    }
    const header = req.headers[WORKER_SECRET_HEADER];
    if (!secretMatches(typeof header === 'string' ? header : undefined, row.secret_hash)) {
      throw new HttpError(
        403,
        'forbidden',
        `the ${WORKER_SECRET_HEADER} header is missing or wrong for worker ${id}: only the worker registered as ${id} may speak for it`,
      );
    }
    const tokenPool = req.token?.pool;
    if (tokenPool && tokenPool !== row.pool) {
      throw new HttpError(
        403,
        'forbidden',
        `this worker token is for pool '${tokenPool}', not '${row.pool}'`,
      );
    }
    if (!live || live.state === 'lost' || live.state === 'stopped') {
      if (opts.mayBeGone) return;
      throw new HttpError(
        409,
        'unknown-worker',
        `worker ${id} was taken for lost or left: register again with its id and secret`,
      );
    }
    req.worker = live;
  };
}

/**
 * Route hook of the report route: one report of a worker at a time (409 `busy` for a second one while the first
 * is received or applied), so what one worker can make the controller hold is one report.
 */
export async function oneReportAtATime(req: FastifyRequest, reply: FastifyReply): Promise<void> {
  const w = req.worker!;
  if (w.reporting) {
    throw new HttpError(
      409,
      'busy',
      `worker ${w.id} has a report in flight: send the next when it is answered`,
    );
  }
  w.reporting = true;
  reply.raw.once('close', () => {
    w.reporting = false;
  });
}
