import type { FastifyReply, FastifyRequest } from 'fastify';
import { getWorkerRow } from '../ledger/pool-workers.js';
import { WORKER_SECRET_HEADER } from '../protocol/messages.js';
import { HttpError } from './http-error.js';
import type { PoolContext } from './pool-row.js';
import { secretMatches } from './worker-secret.js';

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
    const row = live ? { pool: live.pool, secret_hash: live.secretHash } : getWorkerRow(ctx.ledger, id);
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
