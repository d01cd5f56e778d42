/**
 * Retry backoff: the wait before retry n (1-based) is `base * 2^(n-1)` seconds, capped at `max`, with up to
 * ±`jitter` (a fraction) of random spread so retries of many tasks don't land at once. Base 0 retries at once.
 */
export interface Backoff {
  /** Seconds before the first retry. */
  base: number;
  /** Cap in seconds. */
  max: number;
  /** Random spread as a fraction of the delay, 0..1. */
  jitter: number;
}

export const DEFAULT_BACKOFF: Backoff = { base: 1, max: 60, jitter: 0.2 };

/** Seconds to wait before retry number `retry` (1 = first retry). `random` is injectable for tests. */
export function retryDelay(
  retry: number,
  b: Backoff = DEFAULT_BACKOFF,
  random: () => number = Math.random,
): number {
  const raw = Math.min(b.max, b.base * 2 ** Math.max(0, retry - 1));
  const spread = raw * b.jitter * (2 * random() - 1);
  return Math.max(0, Math.min(b.max, raw + spread));
}
