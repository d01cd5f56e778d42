import type { FastifyInstance, FastifyReply } from 'fastify';
import type { PollRequest, RegisterAnswer, RegisterRequest, ReportRequest } from '../protocol/messages.js';
import { API_PREFIX, FILE_CHUNK_BYTES, type FileAnswer } from '../protocol/messages.js';
import { SMALL_BODY_BYTES } from './body-budgets.js';
import { HttpError } from './http-error.js';
import { getPool, type PoolContext } from './pool-row.js';
import * as S from './schemas.js';
import { authWorker, oneReportAtATime } from './worker-auth.js';
import { chunkOffset, fileTarget, writeChunk } from './worker-files.js';

const worker = { audience: 'worker' as const };

/**
 * Register the worker routes (worker tokens, each for its own pool). Every route but register speaks for one
 * worker, `:id`, and must carry its session secret (worker-auth.ts). Heartbeats, polls and leaves take small
 * bodies only, so they are read apart from reports (body-budgets.ts).
 */
export function workerRoutes(app: FastifyInstance, ctx: PoolContext, heartbeat: number): void {
  const p = API_PREFIX;
  const own = authWorker(ctx);
  app.post<{ Body: RegisterRequest }>(
    `${p}/workers/register`,
    { config: worker, schema: { body: S.registerSchema } },
    async (req): Promise<RegisterAnswer> => {
      const pool = req.token?.pool;
      if (pool && pool !== req.body.pool) {
        throw new HttpError(
          403,
          'forbidden',
          `this worker token is for pool '${pool}', not '${req.body.pool}'`,
        );
      }
      getPool(ctx.ledger, req.body.pool);
      return { ...ctx.controller.register(req.body), heartbeat };
    },
  );
  app.post<{ Params: { id: string }; Body: PollRequest }>(
    `${p}/workers/:id/poll`,
    { config: worker, onRequest: own, bodyLimit: SMALL_BODY_BYTES, schema: { body: S.pollSchema } },
    async (req, reply) => ctx.controller.poll(req.worker!, req.body.wait * 1000, whenGone(reply)),
  );
  app.post<{ Params: { id: string }; Body: ReportRequest }>(
    `${p}/workers/:id/report`,
    { config: worker, onRequest: [own, oneReportAtATime], schema: { body: S.reportSchema } },
    async (req) => ctx.controller.report(req.worker!, req.body.batches),
  );
  app.put<{ Params: { id: string; launch: string; name: string }; Querystring: { offset?: string } }>(
    `${p}/workers/:id/files/:launch/:name`,
    { config: { ...worker, files: true }, onRequest: own, bodyLimit: FILE_CHUNK_BYTES },
    async (req): Promise<FileAnswer> => {
      const bytes = Buffer.isBuffer(req.body) ? req.body : undefined;
      if (!bytes) {
        throw new HttpError(
          415,
          'bad-request',
          'a file chunk is raw bytes: content-type application/octet-stream',
        );
      }
      const offset = chunkOffset(req.query.offset);
      const file = fileTarget(ctx.controller.launches, req.worker!, req.params.launch, req.params.name);
      return { offset: writeChunkOr507(file, offset, bytes) };
    },
  );
  app.post<{ Params: { id: string } }>(
    `${p}/workers/:id/heartbeat`,
    { config: worker, onRequest: own, bodyLimit: SMALL_BODY_BYTES, schema: { body: S.emptySchema } },
    async (req) => ctx.controller.heartbeat(req.worker!),
  );
  app.post<{ Params: { id: string }; Body: { reason: string } }>(
    `${p}/workers/:id/leave`,
    {
      config: worker,
      onRequest: authWorker(ctx, { mayBeGone: true }),
      bodyLimit: SMALL_BODY_BYTES,
      schema: { body: S.leaveSchema },
    },
    async (req) => {
      if (req.worker) ctx.controller.leave(req.worker.id, req.body.reason);
      return { ok: true };
    },
  );
}

/** Aborts when the request's connection is gone (closed before its answer, or already). */
function whenGone(reply: FastifyReply): AbortSignal {
  const gone = new AbortController();
  if (reply.raw.socket === null || reply.raw.socket.destroyed) gone.abort();
  else
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) gone.abort();
    });
  return gone.signal;
}

/** writeChunk, with an I/O error of the controller's disk as one clear 507 (the worker sends it again later). */
function writeChunkOr507(file: string, offset: number, bytes: Buffer): number {
  try {
    return writeChunk(file, offset, bytes);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (err instanceof HttpError || code === undefined) throw err;
    throw new HttpError(507, 'io', `the controller cannot write ${file}: ${code}; it will be sent again`);
  }
}
