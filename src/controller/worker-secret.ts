import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Worker identity: the controller gives each worker an id and a session secret at its first registration and
 * keeps only the secret's sha256 (pool_workers.secret_hash). Every later request of the worker carries the
 * secret (header `drover-worker-secret`, or in the body of a registration again): a worker token lets its holder
 * register workers of its pool, never speak for one it did not register.
 */

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** A new session secret (shown to the worker once). */
export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** The stored form of a secret. */
export function hashSecret(secret: string): string {
  return sha256(secret);
}

/** True when `secret` is the one whose hash is `hash` (constant time). */
export function secretMatches(secret: string | undefined, hash: string | null): boolean {
  if (secret === undefined || hash === null || secret.length > 256) return false;
  const a = Buffer.from(sha256(secret), 'hex');
  const b = Buffer.from(hash, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}

/** A new worker id: readable (`host-pid-xxxxxxxx`), one that `taken` says no worker has. */
export function newWorkerId(taken: (id: string) => boolean, host: string, pid: number): string {
  const name = host.replace(/[^A-Za-z0-9.-]/g, '').slice(0, 40) || 'worker';
  for (;;) {
    const id = `${name}-${pid}-${randomBytes(4).toString('hex')}`;
    if (!taken(id)) return id;
  }
}
