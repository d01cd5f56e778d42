import { randomBytes } from 'node:crypto';

/**
 * A worker's session secret: the worker chooses it for its first registration and sends it with every request
 * after; the controller keeps only its sha256. Chosen by the worker, so a first registration sent again after
 * its answer was lost names the same worker (see RegisterRequest).
 */

/** Fewest characters of a secret a worker chooses (newWorkerSecret makes 43). */
export const MIN_WORKER_SECRET_CHARS = 32;

/** A new session secret: 32 random bytes, base64url. */
export function newWorkerSecret(): string {
  return randomBytes(32).toString('base64url');
}
