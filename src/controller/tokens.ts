import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { DroverError } from '../errors.js';
import type { Ledger } from '../ledger/ledger.js';
import { insertToken, revokeTokens, type TokenRow, tokenRow, tokenRows } from '../ledger/server-tokens.js';

/**
 * Bearer tokens of the controller: `drv_<id>_<secret>`. Only the sha256 of a token is stored; the id finds
 * the row. User tokens may call user routes; worker tokens only worker routes, and only for their pool.
 */

export type { TokenRow };

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Create a token; returns its secret text (shown once) and its row. */
export function createToken(
  ledger: Ledger,
  kind: 'user' | 'worker',
  name: string,
  pool: string | null = null,
): { token: string; row: TokenRow } {
  const id = randomBytes(6).toString('hex');
  const token = `drv_${id}_${randomBytes(24).toString('base64url')}`;
  const row: TokenRow = {
    id,
    hash: sha256(token),
    kind,
    pool,
    name,
    created_at: Date.now() / 1000,
    revoked_at: null,
  };
  insertToken(ledger, row);
  return { token, row };
}

/** The valid (not revoked) token row for a bearer token text, or undefined. */
export function verifyToken(ledger: Ledger, token: string): TokenRow | undefined {
  const m = /^drv_([0-9a-f]{12})_[A-Za-z0-9_-]{16,64}$/.exec(token);
  if (!m) return undefined;
  const row = tokenRow(ledger, m[1]!);
  if (!row || row.revoked_at !== null) return undefined;
  const a = Buffer.from(sha256(token), 'hex');
  const b = Buffer.from(row.hash, 'hex');
  return a.length === b.length && timingSafeEqual(a, b) ? row : undefined;
}

/** The valid (not revoked) token row with this id, or undefined: what a dashboard session checks each time. */
export function tokenById(ledger: Ledger, id: string): TokenRow | undefined {
  const row = tokenRow(ledger, id);
  return row && row.revoked_at === null ? row : undefined;
}

/** Every token, oldest first (no secrets: they are not stored). */
export function listTokens(ledger: Ledger): TokenRow[] {
  return tokenRows(ledger);
}

/** Revoke a token by id; refused requests follow at once. */
export function revokeToken(ledger: Ledger, id: string): void {
  if (revokeTokens(ledger, [id], Date.now() / 1000) === 0) {
    const known = tokenRow(ledger, id);
    throw new DroverError(
      'not-found',
      known ? `token ${id} is already revoked` : `no token with id '${id}': see drover server token list`,
    );
  }
}

/** Write a secret to a file only its owner can read (mode 0600), atomically. */
export function writeSecret(file: string, text: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, `${text}\n`, { mode: 0o600 });
  fs.chmodSync(tmp, 0o600);
  fs.renameSync(tmp, file);
}
