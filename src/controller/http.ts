import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DroverError } from '../errors.js';
import type { Ledger } from '../ledger/ledger.js';
import { API_PREFIX, type ErrorBody } from '../protocol/messages.js';
import { type TokenRow, verifyToken } from './tokens.js';
import { UnknownWorker } from './worker-row.js';

/** Who may call a route. */
export type Audience = 'user' | 'worker';

declare module 'fastify' {
  interface FastifyContextConfig {
    audience?: Audience;
  }
  interface FastifyRequest {
    token?: TokenRow;
  }
}

/** An HTTP error with its status and code (the one error type of the API). */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const STATUS: Record<string, number> = {
  usage: 400,
  'not-found': 404,
  conflict: 409,
  backend: 502,
  internal: 500,
};

function send(reply: FastifyReply, status: number, code: string, message: string): FastifyReply {
  const body: ErrorBody = { error: { code, message } };
  return reply.code(status).send(body);
}

/**
 * The Fastify app: JSON only, bodies limited and validated, every request authenticated by a bearer token whose
 * kind matches the route's audience (`config.audience`), errors as `{error: {code, message}}`.
 */
export async function makeApp(ledger: Ledger, logger: object): Promise<FastifyInstance> {
  // Loaded by name at run time, not bundled: the framework (~1.5 MB) stays out of every other command's start-up.
  const specifier = 'fastify';
  const { default: Fastify, LogController } = (await import(specifier)) as typeof import('fastify');
  const app = Fastify({
    logger,
    // Workers make thousands of requests: log events, not every request.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: 1 << 20,
    requestTimeout: 0,
    keepAliveTimeout: 75_000,
    forceCloseConnections: true,
    return503OnClosing: true,
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, allErrors: false } },
  });

  app.addHook('onRequest', async (req) => {
    const auth = req.headers.authorization;
    if (!auth?.startsWith('Bearer ')) {
      throw new HttpError(401, 'unauthorized', 'this server needs a token: Authorization: Bearer <token>');
    }
    const token = verifyToken(ledger, auth.slice(7).trim());
    if (!token) throw new HttpError(401, 'unauthorized', 'the token is not valid (unknown or revoked)');
    req.token = token;
    const audience = req.routeOptions.config.audience;
    if (audience && audience !== token.kind) {
      throw new HttpError(
        403,
        'forbidden',
        `a ${token.kind} token cannot call ${req.method} ${req.routeOptions.url}: it is for ${audience}s`,
      );
    }
  });

  app.setNotFoundHandler((req, reply) => {
    send(reply, 404, 'not-found', `no route ${req.method} ${req.url}: this server speaks ${API_PREFIX}`);
  });

  app.setErrorHandler((err: unknown, req: FastifyRequest, reply: FastifyReply) => {
    if (err instanceof HttpError) return send(reply, err.status, err.code, err.message);
    if (err instanceof DroverError) return send(reply, STATUS[err.code] ?? 500, err.code, err.message);
    if (err instanceof UnknownWorker) return send(reply, 409, 'unknown-worker', err.message);
    const e = err as { statusCode?: number; code?: string; message?: string; validation?: unknown };
    if (e.validation) return send(reply, 400, 'bad-request', `bad request body: ${e.message}`);
    if (e.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      return send(reply, 413, 'too-large', 'the request body is too large');
    }
    if (e.statusCode !== undefined && e.statusCode >= 400 && e.statusCode < 500) {
      return send(reply, e.statusCode, 'bad-request', e.message ?? 'bad request');
    }
    req.log.error({ err }, 'request failed');
    return send(reply, 500, 'internal', `internal error: ${e.message ?? String(err)}`);
  });
  return app;
}
