import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DroverError } from '../errors.js';
import type { Ledger } from '../ledger/ledger.js';
import { ledgerError } from '../ledger/open.js';
import { API_PREFIX, type AttemptKey, type ErrorBody, MAX_BODY_BYTES } from '../protocol/messages.js';
import { BODY_BUDGETS, BodyDeadlineError, BodyGates, budgetOf, withDeadline } from './body-budgets.js';
import { drainBody, hasBody, reclaim } from './body-limits.js';
import { sessionUser } from './dashboard/session-auth.js';
import type { Sessions } from './dashboard/sessions.js';
import { HttpError } from './http-error.js';
import { lazyValidators } from './lazy-validators.js';
import type { LiveWorker } from './live.js';
import { type TokenRow, verifyToken } from './tokens.js';
import { describeSchemaError, type SchemaError } from './validation-message.js';

/** How Ajv reads the routes' schemas: bodies as sent (nothing removed or coerced), the first error only. */
export const AJV_OPTIONS = {
  customOptions: { removeAdditional: false, coerceTypes: false, allErrors: false, discriminator: true },
};

/** Who may call a route. */
export type Audience = 'user' | 'worker';

declare module 'fastify' {
  interface FastifyContextConfig {
    audience?: Audience;
    /** Answered without a token: the dashboard's page and its scripts (which hold no data), the login. */
    public?: boolean;
    /** Takes a worker's file chunks (raw bytes), read in a budget of their own. */
    files?: boolean;
  }
  interface FastifyRequest {
    token?: TokenRow;
    /** The worker a worker route speaks for, once its secret was checked. */
    worker?: LiveWorker;
    /** Frees this request's body slot (see BodyGate). */
    releaseBody?: () => void;
    /** The bytes its body took on the wire, once it was parsed (negative while it is; see Reclaimer). */
    parsedBytes?: number;
  }
}

/** What the app needs from the server around it; the ledger comes once the server could listen. */
export interface AppState {
  ledger: Ledger | undefined;
  /** False until the controller has loaded its state: requests get 503 until then. */
  ready: boolean;
  /** The dashboard's logins: a request may bring a session cookie instead of a bearer token. */
  sessions?: Sessions;
}

/**
 * Methods that change nothing: a request by cookie with any other must also say it comes from the dashboard.
 * Fastify reads no body of them either.
 */
const SAFE_METHODS = new Set(['GET', 'HEAD']);

/** The header the dashboard's script sends with every change (a form on another site cannot send it). */
export const DASHBOARD_HEADER = 'x-drover-dashboard';

const STATUS: Record<string, number> = {
  usage: 400,
  'not-found': 404,
  conflict: 409,
  backend: 502,
  internal: 500,
};

function send(
  reply: FastifyReply,
  status: number,
  code: string,
  message: string,
  refused?: AttemptKey[],
  offset?: number,
): FastifyReply {
  const body: ErrorBody = {
    error: { code, message, ...(refused ? { refused } : {}), ...(offset !== undefined ? { offset } : {}) },
  };
  return reply.code(status).send(body);
}

/**
 * The Fastify app: JSON only, every request authenticated (by a bearer token whose kind matches the route's
 * audience, `config.audience`, or a dashboard session) before any of its body is read, bodies read within the
 * budgets of body-budgets.ts and validated, errors as `{error: {code, message}}`.
 */
export async function makeApp(state: AppState, logger: object): Promise<FastifyInstance> {
  // Loaded when the server starts: the bundle keeps the framework (~1.5 MB) in a chunk of its own, out of every
  // other command's start-up, and the package needs no Fastify of its own (its dependencies would bring versions
  // that want a newer Node than ours).
  // (A bundled CommonJS module has only its default export: LogController is read from it.)
  const [{ default: Fastify }, { default: AjvCompiler }] = await Promise.all([
    import('fastify'),
    import('@fastify/ajv-compiler'),
  ]);
  const app = Fastify({
    // Each route's schemas compiled on its first request, not all at start (lazy-validators.ts).
    schemaController: { compilersFactory: { buildValidator: lazyValidators(AjvCompiler()) } },
    logger,
    // Workers make thousands of requests: log events, not every request.
    logController: new Fastify.LogController({ disableRequestLogging: true }),
    bodyLimit: MAX_BODY_BYTES,
    // The whole request must arrive within a minute (answers may take longer: polls wait for work).
    requestTimeout: 60_000,
    keepAliveTimeout: 75_000,
    forceCloseConnections: true,
    return503OnClosing: true,
    ajv: AJV_OPTIONS,
  });
  // Raw bytes only for the routes that take a worker's file chunks; any other route answers 415.
  app.addContentTypeParser('application/octet-stream', { parseAs: 'buffer' }, (req, body, done) => {
    if (req.routeOptions.config.files === true) done(null, body);
    else done(new HttpError(415, 'bad-request', 'this route takes JSON (content-type: application/json)'));
  });
  const gates = new BodyGates();
  // A route answered without a token reads at most the public budget's bytes, whatever it asked for.
  app.addHook('onRoute', (route) => {
    if (route.config?.public) {
      route.bodyLimit = Math.min(route.bodyLimit ?? MAX_BODY_BYTES, BODY_BUDGETS.public.bytes);
    }
  });
  // The dashboard's session cookie: the plugin's onRequest hook (registered before ours, so it runs first) parses
  // the Cookie header into req.cookies, which sessionToken and the logout route read; reply.setCookie sets it.
  const { default: cookie } = await import('@fastify/cookie');
  await app.register(cookie);

  app.addHook('onRequest', async (req) => {
    const ledger = state.ledger;
    if (!state.ready || !ledger) {
      throw new HttpError(503, 'starting', 'the drover server is starting: try again in a moment');
    }
    if (req.routeOptions.config.public) return;
    const auth = req.headers.authorization;
    let token: TokenRow | undefined;
    if (auth === undefined && state.sessions) {
      token = sessionUser(state.sessions, ledger, req);
      if (!token) {
        throw new HttpError(
          401,
          'unauthorized',
          'log in to the dashboard first (a session cookie and its page key), or send Authorization: Bearer <token>',
        );
      }
      if (!SAFE_METHODS.has(req.method) && req.headers[DASHBOARD_HEADER] !== '1') {
        throw new HttpError(
          403,
          'forbidden',
          `a change by session cookie needs the ${DASHBOARD_HEADER}: 1 header (the dashboard sends it)`,
        );
      }
    } else {
      if (!auth?.startsWith('Bearer ')) {
        throw new HttpError(401, 'unauthorized', 'this server needs a token: Authorization: Bearer <token>');
      }
      token = verifyToken(ledger, auth.slice(7).trim());
      if (!token) throw new HttpError(401, 'unauthorized', 'the token is not valid (unknown or revoked)');
    }
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

  app.addHook('preParsing', async (req, reply, payload) => {
    if (SAFE_METHODS.has(req.method) || !hasBody(req.raw)) return payload;
    const { bodyLimit, config } = req.routeOptions;
    // Announced bigger than the route takes: refused by the parser before a byte is read (413).
    if (Number(req.headers['content-length']) > bodyLimit) return payload;
    const { gate, budget } = gates.of(
      budgetOf({ public: config.public === true, bodyLimit, token: req.token, files: config.files === true }),
    );
    // A client may go while its body waits for a slot: it leaves the queue (see BodyGate.acquire); one that goes
    // later gives its slot back at once. The signal is made only for a body that must wait: an AbortController
    // per request (and the DOMException of each abort) was ~5% of a busy pool server's CPU.
    let gone: AbortController | undefined;
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) gone?.abort();
      req.releaseBody?.();
    });
    req.releaseBody = gate.tryAcquire();
    if (!req.releaseBody) {
      gone = new AbortController();
      req.releaseBody = await gate.acquire(gone.signal);
      if (gone.signal.aborted) {
        req.releaseBody();
        return payload;
      }
    }
    req.parsedBytes = -req.raw.socket.bytesRead;
    return withDeadline(payload, budget);
  });
  // The body is parsed and validated: its slot is free for the next one.
  app.addHook('preHandler', async (req) => {
    if (!req.releaseBody) return;
    req.releaseBody();
    // Bytes read off the socket while the body was parsed (chunked bodies have no Content-Length to go by).
    req.parsedBytes = (req.parsedBytes ?? 0) + req.raw.socket.bytesRead;
  });
  // Its parsed body is garbage now (see Reclaimer).
  app.addHook('onResponse', async (req) => {
    if (req.parsedBytes !== undefined && req.parsedBytes > 0) reclaim.answered(req.parsedBytes);
  });

  app.setNotFoundHandler((req, reply) => {
    send(reply, 404, 'not-found', `no route ${req.method} ${req.url}: this server speaks ${API_PREFIX}`);
  });

  app.setErrorHandler(async (err: unknown, req: FastifyRequest, reply: FastifyReply) => {
    req.releaseBody?.();
    // Its client is too slow: the rest of its body is not waited for, and its connection goes with the answer.
    if (err instanceof BodyDeadlineError) reply.header('connection', 'close');
    if (err instanceof HttpError)
      return send(reply, err.status, err.code, err.message, err.refused, err.offset);
    if (err instanceof DroverError) return send(reply, STATUS[err.code] ?? 500, err.code, err.message);
    // The ledger went bad under a running server (damaged, disk failing): a 500 naming the file and the remedy,
    // as the CLI says it, rather than SQLite's bare words.
    const bad = ledgerError(err, state.ledger?.paths.ledger);
    if (bad) {
      req.log.error({ err }, 'request failed: the ledger');
      return send(reply, 500, bad.code, bad.message);
    }
    const e = err as {
      statusCode?: number;
      code?: string;
      message?: string;
      validation?: SchemaError[];
      validationContext?: string;
    };
    if (e.validation?.[0]) {
      const what = e.validationContext === 'body' ? 'the request body' : `the ${e.validationContext}`;
      return send(reply, 400, 'bad-request', `bad request: ${describeSchemaError(e.validation[0], what)}`);
    }
    if (e.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      // Read what the client is still sending: then it can read this answer (see drainBody).
      await drainBody(req.raw);
      const limit = req.routeOptions.bodyLimit;
      const size = limit >= 1 << 20 ? `${limit >> 20} MiB` : `${limit >> 10} KiB`;
      return send(reply, 413, 'too-large', `the request body is too large: at most ${limit} bytes (${size})`);
    }
    if (e.statusCode !== undefined && e.statusCode >= 400 && e.statusCode < 500) {
      await drainBody(req.raw);
      return send(reply, e.statusCode, 'bad-request', e.message ?? 'bad request');
    }
    req.log.error({ err }, 'request failed');
    return send(reply, 500, 'internal', `internal error: ${e.message ?? String(err)}`);
  });
  return app;
}
