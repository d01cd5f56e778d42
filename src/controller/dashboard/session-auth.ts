import type { FastifyRequest } from 'fastify';
import type { Ledger } from '../../ledger/ledger.js';
import { type TokenRow, tokenById } from '../tokens.js';
import { PAGE_KEY_HEADER, PAGE_KEY_PARAM, type Sessions, sessionCookie } from './sessions.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The page key may come as the `page_key` query parameter (the event stream: EventSource sends no headers). */
    pageKeyInQuery?: boolean;
  }
}

/** The page key a request brings: its header, or on a route that allows it, its query parameter. */
function pageKey(req: FastifyRequest): string | undefined {
  const header = req.headers[PAGE_KEY_HEADER];
  if (typeof header === 'string') return header;
  if (!req.routeOptions.config.pageKeyInQuery) return undefined;
  const q = (req.query as Record<string, unknown> | undefined)?.[PAGE_KEY_PARAM];
  return typeof q === 'string' ? q : undefined;
}

/** The session cookie's value a request brings for the server it reached (see sessionCookie). */
export function sessionId(req: FastifyRequest): string | undefined {
  return req.cookies[sessionCookie(req.headers.host)];
}

/**
 * The user a request's session stands for, or undefined: no cookie, an unknown or expired one, its page key
 * missing or wrong (a cookie replayed from elsewhere), or its token revoked (then the session ends).
 */
export function sessionUser(sessions: Sessions, ledger: Ledger, req: FastifyRequest): TokenRow | undefined {
  const id = sessionId(req);
  const session = sessions.get(id, pageKey(req));
  if (!session) return undefined;
  if (session.tokenId === null) {
    return {
      id: 'session',
      hash: '',
      kind: 'user',
      pool: null,
      name: 'dashboard one-time login',
      created_at: 0,
      revoked_at: null,
    };
  }
  const row = tokenById(ledger, session.tokenId);
  if (row?.kind !== 'user') {
    sessions.close(id);
    return undefined;
  }
  return row;
}
