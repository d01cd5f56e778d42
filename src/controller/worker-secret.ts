import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Worker identity: the controller gives each worker an id at its first registration, bound to a session secret
 * (the worker's own, or one the controller makes for a worker of an earlier version), and keeps only the
 * secret's sha256 (pool_workers.secret_hash). Every later request of the worker carries the secret (header
 * `drover-worker-secret`, or in the body of a registration again): a worker token lets its holder register
 * workers of its pool, never speak for one it did not register.
 */

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
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

/** A worker's name in its ids: its host's, readable. */
function idPrefix(host: string, pid: number): string {
  return `${host.replace(/[^A-Za-z0-9.-]/g, '').slice(0, 40) || 'worker'}-${pid}`;
}

/**
 * The id a worker that chose its secret is given first (`host-pid-xxxxxxxx`, the x from the secret's hash): the
 * same for the same registration sent again, so it finds the row its lost answer made.
 */
export function ownWorkerId(host: string, pid: number, secret: string): string {
  return `${idPrefix(host, pid)}-${sha256(`drover worker id\0${secret}`).slice(0, 8)}`;
}

/**
 * A new worker id: readable (`host-pid-xxxxxxxx`), one that `taken` says no worker has; for a worker that chose
 * its `secret`, its ownWorkerId unless that is taken.
 */
export function newWorkerId(
  taken: (id: string) => boolean,
  host: string,
  pid: number,
  secret?: string,
): string {
  const own = secret !== undefined ? ownWorkerId(host, pid, secret) : undefined;
  if (own !== undefined && !taken(own)) return own;
  for (;;) {
    const id = `${idPrefix(host, pid)}-${randomBytes(4).toString('hex')}`;
    if (!taken(id)) return id;
  }
}
