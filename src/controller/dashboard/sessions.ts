import { randomBytes } from 'node:crypto';

/**
 * The dashboard's logins, in memory (a restart logs everyone out). A browser logs in with a user token (pasted
 * on the login page) or a one-time code (in the URL printed at start); either gives it a session cookie
 * (HttpOnly, SameSite=Strict), so the token itself never sits in the page, its storage or its history.
 * Each session remembers the token it came from: revoking the token ends its sessions at their next request.
 */

/** The session cookie's name. */
export const SESSION_COOKIE = 'drover_session';
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
}

export class Sessions {
  private readonly sessions = new Map<string, Session>();
  private readonly codes = new Map<string, number>();

  constructor(private readonly now: () => number = () => Date.now() / 1000) {}

  /** A new session for a token (or a code: null); returns the cookie's value. */
  open(tokenId: string | null): string {
    const id = randomBytes(32).toString('base64url');
    this.sessions.set(id, { tokenId, expires: this.now() + SESSION_SECONDS });
    while (this.sessions.size > MAX_SESSIONS) {
      const oldest = this.sessions.keys().next().value as string;
      this.sessions.delete(oldest);
    }
    return id;
  }

  /** The live session of a cookie value, or undefined (unknown, or expired: then forgotten). */
  get(id: string | undefined): Session | undefined {
    if (id === undefined) return undefined;
    const s = this.sessions.get(id);
    if (!s) return undefined;
    if (s.expires <= this.now()) {
      this.sessions.delete(id);
      return undefined;
    }
    return s;
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
