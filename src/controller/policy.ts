import type { TerminalState } from '../protocol/states.js';
import { DEFAULT_BACKOFF, retryDelay } from '../runner/backoff.js';

/** States after which a task is tried again while it has retries left. */
export const RETRYABLE: readonly TerminalState[] = ['failed', 'killed', 'timeout', 'lost', 'error'];

/** What becomes of a task after an attempt ended. */
export type AfterAttempt = { kind: 'done' } | { kind: 'retry'; notBefore: number };

/**
 * Decide whether a task whose attempt ended in `state` is tried again: when the state is retryable and fewer than
 * `retries` retries were made (`tries` counts attempts in this launch, the ended one included). The retry waits
 * the backoff of backoff.ts (base `retryDelay` seconds, doubling, max 60 s, ±20%) from `now`.
 */
export function afterAttempt(
  state: TerminalState,
  tries: number,
  retries: number,
  retryDelaySec: number,
  now: number,
  random: () => number = Math.random,
): AfterAttempt {
  if (!RETRYABLE.includes(state) || tries > retries) return { kind: 'done' };
  return {
    kind: 'retry',
    notBefore: now + retryDelay(tries, { ...DEFAULT_BACKOFF, base: retryDelaySec }, random),
  };
}

/** Workers not heard from for more than `lostAfter` seconds at `now`: their running attempts are lost. */
export function silentWorkers(
  workers: readonly { id: string; lastSeen: number; alive: boolean }[],
  now: number,
  lostAfter: number,
): string[] {
  return workers.filter((w) => w.alive && now - w.lastSeen > lostAfter).map((w) => w.id);
}

/** A live worker as scaling down sees it. */
export interface DrainCandidate {
  id: string;
  /** Tasks it holds. */
  tasks: number;
  /** When it first registered (unix s). */
  registeredAt: number;
}

/**
 * Which `n` workers to drain when a pool is scaled down: the idlest first (fewest tasks held), and among equally
 * idle ones the oldest (first registered): under a scheduler time limit it has the least time left.
 */
export function chooseToDrain(workers: readonly DrainCandidate[], n: number): string[] {
  return [...workers]
    .sort((a, b) => a.tasks - b.tasks || a.registeredAt - b.registeredAt || (a.id < b.id ? -1 : 1))
    .slice(0, Math.max(0, n))
    .map((w) => w.id);
}
