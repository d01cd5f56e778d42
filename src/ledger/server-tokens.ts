import type { Ledger } from './ledger.js';

/** The rows of the controller's bearer tokens (server_tokens): only their sha256 is kept. */

/** A token's row. */
export interface TokenRow {
  /** The public part, shown by `drover server token list`. */
  id: string;
  /** sha256 of the whole token, hex. */
  hash: string;
  kind: 'user' | 'worker';
  /** Worker tokens: the pool it may serve (null: any pool). */
  pool: string | null;
  /** What it is for. */
  name: string;
  created_at: number;
  /** When it was revoked; null while valid. */
  revoked_at: number | null;
}

/** Keep a new token's row. */
export function insertToken(ledger: Ledger, row: TokenRow): void {
  ledger.write(() =>
    ledger
      .stmt(
        'INSERT INTO server_tokens (id, hash, kind, pool, name, created_at) VALUES (@id, @hash, @kind, @pool, @name, @created_at)',
      )
      .run(row),
  );
}

/** A token's row by its public id, or undefined. */
export function tokenRow(ledger: Ledger, id: string): TokenRow | undefined {
  return ledger.stmt('SELECT * FROM server_tokens WHERE id = ?').get(id) as TokenRow | undefined;
}

/** Every token's row, oldest first. */
export function tokenRows(ledger: Ledger): TokenRow[] {
  return ledger.stmt('SELECT * FROM server_tokens ORDER BY created_at, id').all() as TokenRow[];
}

/** How many user tokens there are (revoked ones too). */
export function userTokenCount(ledger: Ledger): number {
  return (ledger.stmt("SELECT count(*) AS n FROM server_tokens WHERE kind = 'user'").get() as { n: number })
    .n;
}

/** Revoke tokens by id at `at`; returns how many were valid until now. */
export function revokeTokens(ledger: Ledger, ids: readonly string[], at: number): number {
  return ledger.write(() => {
    const revoke = ledger.stmt('UPDATE server_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL');
    let n = 0;
    for (const id of ids) n += revoke.run(at, id).changes;
    return n;
  });
}

/** The ids of a pool's valid worker tokens. */
export function poolWorkerTokenIds(ledger: Ledger, pool: string): string[] {
  return ledger
    .stmt("SELECT id FROM server_tokens WHERE kind = 'worker' AND pool = ? AND revoked_at IS NULL")
    .pluck()
    .all(pool) as string[];
}
