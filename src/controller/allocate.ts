/**
 * Automatic allocation's decisions (`drover pool create --auto`), as plain functions over plain values (tested
 * in memory, like dispatch.ts): how many workers to ask the scheduler for now, which idle workers leave, which
 * allocations still waiting in the queue are withdrawn. The scheduler calls and the clock are the caller's
 * (autoscale.ts).
 *
 * Rules (after HyperQueue's `hq alloc add`):
 * - Demand: tasks queued that neither the free slots of the ready workers nor the workers on their way (in
 *   setup, or submitted and not registered yet) can take. Nothing queued: nothing submitted.
 * - One allocation at a time, of k workers (one array job): enough for the demand, within `maxWorkers` counting
 *   every worker the pool has or has asked for, and only while fewer than `backlog` allocations wait in the
 *   scheduler's queue.
 * - After `PAUSE_AFTER` allocations in a row failed to start (refused, ended before a worker registered, setup
 *   failed), allocation pauses with the last reason, instead of submitting forever.
 * - Workers idle past `idleTimeout` leave, keeping `minWorkers`; allocations whose workers all still wait in the
 *   queue are withdrawn once nothing was queued for `idleTimeout`.
 */

/** A pool's automatic allocation settings (`pool create --auto`). */
export interface AutoSettings {
  /** Most workers at once: live, in setup, and submitted but not registered. */
  maxWorkers: number;
  /** Idle workers that stay (idle ones past this number leave). */
  minWorkers: number;
  /** Seconds a worker may stay idle before it leaves. */
  idleTimeout: number;
  /** Most allocations waiting in the scheduler's queue at once. */
  backlog: number;
}

/** Allocations in a row that failed to start after which allocation pauses. */
export const PAUSE_AFTER = 3;

/** What the decision sees of a pool now. */
export interface AllocationInput {
  /** Tasks of the pool's launches not handed to a worker (ready, or waiting to retry). */
  queued: number;
  /** Free slots of the ready workers that take tasks. */
  freeSlots: number;
  /** Tasks one new worker takes at once. */
  perWorker: number;
  /** Registered workers not gone: in setup, ready or draining. */
  live: number;
  /** Of those, the ones still in their setup (they will take tasks soon). */
  inSetup: number;
  /** Workers submitted that have not registered and still may (waiting in the queue, or starting). */
  starting: number;
  /** Allocations none of whose workers has registered yet. */
  waitingAllocations: number;
  /** Allocations in a row, the newest last, that failed to start. */
  failuresInRow: number;
  /** Why the newest of them failed. */
  lastFailure?: string;
}

/** What to do now: submit one allocation of `workers`, or nothing (with the reason either way). */
export type AllocationDecision =
  | { kind: 'submit'; workers: number; reason: string }
  | { kind: 'wait'; reason: string }
  | { kind: 'paused'; reason: string };

/** How many workers to ask the scheduler for now, and why (or why none). */
export function decideAllocation(s: AutoSettings, p: AllocationInput): AllocationDecision {
  if (p.failuresInRow >= PAUSE_AFTER) {
    return {
      kind: 'paused',
      reason: `paused: ${p.failuresInRow} allocations in a row failed to start${p.lastFailure ? ` (last: ${p.lastFailure})` : ''}; fix it, then drover pool resume`,
    };
  }
  if (p.queued <= 0) return { kind: 'wait', reason: 'no task queued' };
  const perWorker = Math.max(1, p.perWorker);
  const coming = p.inSetup + p.starting;
  const uncovered = p.queued - p.freeSlots - coming * perWorker;
  if (uncovered <= 0) {
    return {
      kind: 'wait',
      reason: `${p.queued} queued task(s) fit the free slots and the ${coming} worker(s) on their way`,
    };
  }
  const room = s.maxWorkers - p.live - p.starting;
  if (room <= 0) {
    return {
      kind: 'wait',
      reason: `at --max-workers ${s.maxWorkers} (${p.live} live, ${p.starting} on their way); ${p.queued} task(s) queued`,
    };
  }
  if (p.waitingAllocations >= s.backlog) {
    return {
      kind: 'wait',
      reason: `${p.waitingAllocations} allocation(s) waiting in the scheduler's queue (--backlog ${s.backlog})`,
    };
  }
  const workers = Math.min(room, Math.ceil(uncovered / perWorker));
  return { kind: 'submit', workers, reason: `${p.queued} task(s) queued, ${uncovered} with no slot` };
}

/** A live worker as idle release sees it. */
export interface IdleView {
  id: string;
  /** Since when it has held no task (unix s); undefined while it holds some, is in setup, or drains. */
  idleSince: number | undefined;
  /** When it registered (unix s). */
  registeredAt: number;
}

/**
 * Which workers leave now: those idle for `idleTimeout` seconds or more at `now`, the longest idle first,
 * keeping `minWorkers` of the `live` workers (the ones that became idle last stay).
 */
export function idleToLeave(
  workers: readonly IdleView[],
  now: number,
  s: Pick<AutoSettings, 'idleTimeout' | 'minWorkers'>,
  live: number,
): string[] {
  const idle = workers
    .filter((w) => w.idleSince !== undefined && now - w.idleSince >= s.idleTimeout)
    .sort((a, b) => a.idleSince! - b.idleSince! || a.registeredAt - b.registeredAt || (a.id < b.id ? -1 : 1));
  return idle.slice(0, Math.max(0, live - s.minWorkers)).map((w) => w.id);
}

/**
 * Which waiting allocations to withdraw (scancel / qdel): all of them, once nothing was queued since
 * `queueEmptySince` for `idleTimeout` seconds at `now`; none while tasks are queued.
 */
export function toWithdraw(
  waiting: readonly string[],
  queueEmptySince: number | undefined,
  now: number,
  idleTimeout: number,
): string[] {
  if (queueEmptySince === undefined || now - queueEmptySince < idleTimeout) return [];
  return [...waiting];
}

/** The end of an allocation, as the failure count sees it. */
export type AllocationOutcome = 'waiting' | 'started' | 'failed';

/**
 * How many allocations in a row, the newest last, failed to start: counted back from the newest one that is not
 * waiting any more, until one that started. Waiting ones are skipped (they have not said yet).
 */
export function failuresInRow(outcomes: readonly AllocationOutcome[]): number {
  let n = 0;
  for (let i = outcomes.length - 1; i >= 0; i--) {
    const o = outcomes[i]!;
    if (o === 'started') break;
    if (o === 'failed') n++;
  }
  return n;
}

/** What the controller knows of one allocation now. */
export interface AllocationFacts {
  /** Its elements' states in the scheduler (`gone`: not there any more); undefined when it could not be asked. */
  elements: ('waiting' | 'running' | 'error' | 'gone')[] | undefined;
  /** Its workers that registered: their state, and why they left. */
  workers: { state: string; reason: string | null }[];
}

/** What an allocation is now: queued, running, finished or failed, and why it failed. */
export function judgeAllocation(f: AllocationFacts): {
  state: 'queued' | 'running' | 'finished' | 'failed';
  reason: string | null;
} {
  const gone = (s: string) => s === 'lost' || s === 'stopped';
  const setupFailed = f.workers.find((w) => gone(w.state) && w.reason !== null && /^setup /.test(w.reason));
  const started = f.workers.some(
    (w) =>
      w.state === 'ready' ||
      w.state === 'draining' ||
      (gone(w.state) && w.reason !== null && !/^setup /.test(w.reason)),
  );
  const liveWorkers = f.workers.some((w) => !gone(w.state));
  const inQueue = f.elements === undefined || f.elements.some((e) => e === 'waiting' || e === 'running');
  if (started) return { state: inQueue || liveWorkers ? 'running' : 'finished', reason: null };
  if (setupFailed) return { state: 'failed', reason: setupFailed.reason };
  if (inQueue || liveWorkers) return { state: 'queued', reason: null };
  return {
    state: 'failed',
    reason: f.elements?.includes('error')
      ? 'its workers are in error in the scheduler and will not start'
      : 'its workers ended before registering with the controller',
  };
}
