import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Ledger } from '../../ledger/ledger.js';
import type { LoginAnswer, LogoutAnswer } from '../../protocol/dashboard.js';
import { API_PREFIX } from '../../protocol/messages.js';
import { HttpError } from '../http-error.js';
import * as S from '../schemas.js';
import { verifyToken } from '../tokens.js';
import { sessionId } from './session-auth.js';
import { type Opened, PAGE_KEY_PARAM, SESSION_SECONDS, type Sessions, sessionCookie } from './sessions.js';
import { readWebFile, type WebFile } from './web-files.js';

const UI = `${API_PREFIX}/ui`;
const open = { public: true };
const user = { audience: 'user' as const };

/** What every dashboard answer carries: no caching, no sniffing, no framing, scripts only from here. */
const SECURITY_HEADERS = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
};

const TYPES: Record<WebFile, string> = {
  'index.html': 'text/html; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
};

function sendFile(reply: FastifyReply, name: WebFile): FastifyReply {
  return reply.headers(SECURITY_HEADERS).type(TYPES[name]).send(readWebFile(name));
}

/** Give the browser a session's cookie, named for the server it reached (see sessionCookie). */
function setSession(req: FastifyRequest, reply: FastifyReply, session: Opened): void {
  reply.setCookie(sessionCookie(req.headers.host), session.id, {
    httpOnly: true,
    sameSite: 'strict',
    path: '/',
    maxAge: SESSION_SECONDS,
  });
}

/**
 * Register the dashboard's way in: its page and files (public), the login by one-time link or by token (public;
 * each gives a session: a cookie, and a page key the page alone receives), and the logout.
 */
export function loginRoutes(app: FastifyInstance, ledger: () => Ledger, sessions: Sessions): void {
  for (const name of ['app.js', 'app.css'] as const) {
    app.get(`/assets/${name}`, { config: open }, async (_req, reply) => sendFile(reply, name));
  }
  app.get('/', { config: open }, async (_req, reply) => sendFile(reply, 'index.html'));

  // A one-time link (printed at start) opens a session and goes to the dashboard; the code never works again.
  // The page key goes in the redirect's fragment: the browser keeps it for the page and sends it to no server.
  app.get<{ Querystring: { code?: string } }>('/login', { config: open }, async (req, reply) => {
    const code = req.query.code;
    if (typeof code === 'string' && code.length <= 100 && sessions.redeem(code)) {
      const session = sessions.open(null);
      setSession(req, reply, session);
      return reply.headers(SECURITY_HEADERS).redirect(`/#${PAGE_KEY_PARAM}=${session.key}`, 303);
    }
    return reply
      .code(401)
      .headers(SECURITY_HEADERS)
      .type('text/html; charset=utf-8')
      .send(
        '<!doctype html><meta charset="utf-8"><title>drover</title><p>This login link was used already or has expired. <a href="/">Log in with a token</a> (drover server token create), or start <code>drover ui</code> again for a new link.</p>',
      );
  });
  // Its body is at most the public budget's few KiB, read within its deadline (body-budgets.ts).
  app.post<{ Body: { token: string } }>(
    `${UI}/login`,
    {
      config: open,
      schema: { body: S.loginSchema },
    },
    async (req, reply): Promise<LoginAnswer> => {
      const token = verifyToken(ledger(), req.body.token.trim());
      if (!token) throw new HttpError(401, 'unauthorized', 'the token is not valid (unknown or revoked)');
      if (token.kind !== 'user') {
        throw new HttpError(403, 'forbidden', 'a worker token cannot open the dashboard: use a user token');
      }
      const session = sessions.open(token.id);
      setSession(req, reply, session);
      return { ok: true, [PAGE_KEY_PARAM]: session.key };
    },
  );
  app.post(`${UI}/logout`, { config: user }, async (req, reply): Promise<LogoutAnswer> => {
    sessions.close(sessionId(req));
    reply.clearCookie(sessionCookie(req.headers.host), { path: '/' });
    return { ok: true };
  });
}
