import { randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * The dashboard's logins, in memory (a restart logs everyone out). A browser logs in with a user token (pasted
 * on the login page) or a one-time code (in the URL printed at start); either gives it a session: a cookie
 * (HttpOnly, SameSite=Strict) and a page key. Cookies ignore ports, so every service on the same host receives
 * the cookie; the page key is handed only to the page (in the login's answer, or the one-time link's redirect
 * fragment), kept in its per-origin storage (the origin includes the port) and sent as a header with every
 * request. A session needs both: a cookie replayed from another port, without its key, is refused.
 * The token itself never sits in the page, its storage or its history. Each session remembers the token it came
 * from: revoking the token ends its sessions at their next request.
 */

/** The header in which the page sends its session's key. */
export const PAGE_KEY_HEADER = 'x-drover-page-key';
/** The query parameter that carries it on the one route a page cannot add headers to (its event stream). */
export const PAGE_KEY_PARAM = 'page_key';

/**
 * The session cookie's name on the server a request reached, `drover_session_<port>` by the port of its Host
 * header (the port the browser sees): `drover ui` and `drover server` on one host keep a cookie each, so
 * logging in to one does not log out of the other.
 */
export function sessionCookie(host: string | undefined): string {
  const port = /:(\d{1,5})$/.exec(host ?? '')?.[1];
  return port === undefined ? 'drover_session' : `drover_session_${port}`;
}
/** A session lasts this long after its login (seconds). */
export const SESSION_SECONDS = 12 * 3600;
/** A one-time code works once, and only this long after it was made (seconds). */
export const CODE_SECONDS = 15 * 60;
/** At most this many sessions at once: the oldest goes first (a loop of logins cannot grow the heap). */
const MAX_SESSIONS = 1000;

/** What a session stands for: a user token's id, or null for one a one-time code opened. */
export interface Session {
  tokenId: string | null;
  expires: number;
  /** Its page key: what the page sends along with the cookie. */
  key: string;
}

/** A session opened: the cookie's value and the page key. */
export interface Opened {
  id: string;
  key: string;
}

export class Sessions {
  private readonly sessions = new Map<string, Session>();
  private readonly codes = new Map<string, number>();

  constructor(private readonly now: () => number = () => Date.now() / 1000) {}

  /** A new session for a token (or a code: null): its cookie value and page key. */
  open(tokenId: string | null): Opened {
    const id = randomBytes(32).toString('base64url');
    const key = randomBytes(32).toString('base64url');
    this.sessions.set(id, { tokenId, expires: this.now() + SESSION_SECONDS, key });
    while (this.sessions.size > MAX_SESSIONS) {
      const oldest = this.sessions.keys().next().value as string;
      this.sessions.delete(oldest);
    }
    return { id, key };
  }

  /**
   * The live session of a cookie value whose page key is `key`, or undefined (unknown, expired: then forgotten,
   * or the key missing or not its own).
   */
  get(id: string | undefined, key: string | undefined): Session | undefined {
    if (id === undefined) return undefined;
    const s = this.sessions.get(id);
    if (!s) return undefined;
    if (s.expires <= this.now()) {
      this.sessions.delete(id);
      return undefined;
    }
    return key !== undefined && sameText(key, s.key) ? s : undefined;
  }

  close(id: string | undefined): void {
    if (id !== undefined) this.sessions.delete(id);
  }

  /** A new one-time login code. */
  code(): string {
    const code = randomBytes(24).toString('base64url');
    this.codes.set(code, this.now() + CODE_SECONDS);
    return code;
  }

  /** Use a code: true once, if it exists and has not expired; never again. */
  redeem(code: string): boolean {
    const expires = this.codes.get(code);
    if (expires === undefined) return false;
    this.codes.delete(code);
    return expires > this.now();
  }
}

/** `a === b`, in a time that does not tell how much of them matched. */
function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
