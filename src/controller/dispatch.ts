import type { Resources } from '../protocol/messages.js';

/**
 * The dispatcher's decisions, as plain functions over plain values (tested in memory): which queued task goes
 * to which worker. I/O (the database, the HTTP answers) is the caller's.
 *
 * Rules:
 * - Resource-aware: a worker takes a task when its slots and its CPUs, GPUs and memory (when tracked) have room
 *   for it, counting every task already handed to it.
 * - Prefetch: a worker may also hold up to `prefetch` tasks per slot beyond its free capacity, so a freed slot starts the
 *   next task at once without a round trip to the controller. Only for launches whose tasks are short (for long
 *   ones the round trip does not matter, and a task waiting behind a long one while another worker idles would),
 *   and only for "slot-shaped" tasks (needing at most one slot's share of the worker) on a worker that holds only
 *   slot-shaped tasks: its runner starts at most `slots` at once, so such tasks can never oversubscribe it.
 * - Fair between launches: each next task goes to the launch with the fewest tasks in flight (ties: the oldest
 *   launch), so concurrent launches on a pool share it evenly.
 * - Spread: among workers that can take it, the one with the most free slots.
 * - Time: a task with a time limit goes only to a worker whose own time limit (its scheduler allocation's) leaves
 *   it at least that long.
 */

/** A worker as the dispatcher sees it. */
export interface WorkerView {
  id: string;
  pool: string;
  /** False while it runs its setup, drains, or is lost. */
  accepting: boolean;
  slots: number;
  capacity: Resources;
  /** Sum of the demands of the tasks handed to it and not ended. */
  used: Resources;
  /** How many tasks it holds. */
  count: number;
  /** True when every task it holds is slot-shaped (see above); true when it holds none. */
  slotShapedOnly: boolean;
  /** Seconds until its scheduler ends it (its pool's time limit); undefined: no limit known. */
  timeLeft?: number;
}

/** A launch with tasks waiting, as the dispatcher sees it. */
export interface LaunchView {
  id: number;
  pool: string;
  /** What each of its tasks needs. */
  demand: Resources;
  /** Tasks ready to be handed out now. */
  ready: number;
  /** Tasks handed out and not ended (for fairness). */
  inFlight: number;
  /**
   * Tasks per slot a worker may hold beyond its free capacity for this launch: 0 for long tasks (never
   * prefetched), more for shorter ones (see prefetchPerSlot).
   */
  prefetch: number;
  /** Each task's time limit in seconds (`--task-timeout`); undefined: none. */
  timeNeeded?: number;
}

/** One decision: hand one task of `launch` to `worker`. */
export interface Assignment {
  worker: string;
  launch: number;
}

/**
 * Most tasks per slot a worker holds ahead: 0.1 s of 1 ms tasks. The round trip that refills a worker (its
 * report, the controller, the next poll) takes tens of milliseconds, and a worker's starter reports ends in
 * batches of up to 20 ms; with 16 the slots of a worker running 1 ms tasks sat idle about a third of the time.
 */
const PREFETCH_MAX = 100;

/**
 * How many tasks per slot to prefetch for a launch whose attempts take `avgSeconds` on average: none until
 * one ended or when they take a second or more; else enough for about 0.1 s of work per slot (1 to 100).
 */
export function prefetchPerSlot(avgSeconds: number | undefined): number {
  if (avgSeconds === undefined || avgSeconds >= 1) return 0;
  return Math.min(PREFETCH_MAX, Math.max(1, Math.ceil(0.1 / Math.max(avgSeconds, 0.001))));
}

/**
 * True when a worker that held `count` tasks before this dispatch is low enough on prefetched tasks to be topped
 * up: at most half its prefetch depth left. Topping up in halves, not one task per ended task, halves (and
 * better) the answers a worker running very short tasks needs, each costing a round trip and a commit.
 */
export function lowOnPrefetch(count: number, slots: number, prefetch: number): boolean {
  return count <= slots + Math.floor(prefetch / 2);
}

/** True when `demand` needs at most one slot's share of the worker's resources. */
export function slotShaped(w: Pick<WorkerView, 'slots' | 'capacity'>, d: Resources): boolean {
  return (
    d.cpus * w.slots <= w.capacity.cpus &&
    d.gpus * w.slots <= w.capacity.gpus &&
    (w.capacity.mem_mb === 0 || d.mem_mb * w.slots <= w.capacity.mem_mb)
  );
}

/** True when the worker has room for `d` right now (not counting prefetch). */
export function fitsNow(w: WorkerView, d: Resources): boolean {
  return (
    w.count < w.slots &&
    w.used.cpus + d.cpus <= w.capacity.cpus &&
    w.used.gpus + d.gpus <= w.capacity.gpus &&
    (w.capacity.mem_mb === 0 || w.used.mem_mb + d.mem_mb <= w.capacity.mem_mb)
  );
}

/** True when a worker with nothing running could ever run a task needing `d`. */
export function couldEverFit(w: Pick<WorkerView, 'capacity'>, d: Resources): boolean {
  return (
    d.cpus <= w.capacity.cpus &&
    d.gpus <= w.capacity.gpus &&
    (w.capacity.mem_mb === 0 || d.mem_mb <= w.capacity.mem_mb)
  );
}

/**
 * True when the worker may take a task needing `d`: it fits now, or it may wait there as prefetch — when the
 * worker, holding `heldBefore` tasks before this dispatch, was low on prefetched tasks (see lowOnPrefetch).
 */
export function canTake(w: WorkerView, d: Resources, prefetch: number, heldBefore = w.count): boolean {
  if (!w.accepting) return false;
  if (fitsNow(w, d)) return true;
  return (
    w.slotShapedOnly &&
    slotShaped(w, d) &&
    w.count < w.slots + prefetch &&
    lowOnPrefetch(heldBefore, w.slots, prefetch)
  );
}

/** True when the worker's time left covers a task's time limit (either unknown: true). */
export function outlives(w: Pick<WorkerView, 'timeLeft'>, l: Pick<LaunchView, 'timeNeeded'>): boolean {
  return w.timeLeft === undefined || l.timeNeeded === undefined || w.timeLeft >= l.timeNeeded;
}

/**
 * Decide which workers get which launches' ready tasks, one task at a time, until no ready task fits anywhere.
 * The views are not changed; the decisions come back in the order they were made.
 */
export function planDispatch(workers: readonly WorkerView[], launches: readonly LaunchView[]): Assignment[] {
  const ws = workers.map((w) => ({ ...w, used: { ...w.used }, before: w.count }));
  const ls = launches.filter((l) => l.ready > 0).map((l) => ({ ...l }));
  const out: Assignment[] = [];
  for (;;) {
    ls.sort((a, b) => a.inFlight - b.inFlight || a.id - b.id);
    let placed = false;
    for (const l of ls) {
      if (l.ready === 0) continue;
      let best: (typeof ws)[number] | undefined;
      for (const w of ws) {
        if (w.pool !== l.pool || !outlives(w, l) || !canTake(w, l.demand, l.prefetch * w.slots, w.before))
          continue;
        if (!best || w.slots - w.count > best.slots - best.count) best = w;
      }
      if (!best) continue;
      best.count++;
      best.used.cpus += l.demand.cpus;
      best.used.gpus += l.demand.gpus;
      best.used.mem_mb += l.demand.mem_mb;
      best.slotShapedOnly = best.slotShapedOnly && slotShaped(best, l.demand);
      l.ready--;
      l.inFlight++;
      out.push({ worker: best.id, launch: l.id });
      placed = true;
      break;
    }
    if (!placed) return out;
  }
}

/**
 * The assignments of a plan, each worker's of a launch together (in the order the plan first names the pair): a
 * launch's ready tasks are handed out in id order, so a worker then gets runs of consecutive ids rather than
 * every 64th. Its report is then a few ranges of the ledger's keys, which ingestion walks as ranges instead of
 * looking up each id (transitions/attempts-batch.ts). Who gets how many is the plan's.
 */
export function inRuns(plan: readonly Assignment[]): Assignment[] {
  const pairs = new Map<string, Assignment[]>();
  for (const a of plan) {
    const key = `${a.launch} ${a.worker}`;
    const run = pairs.get(key);
    if (run) run.push(a);
    else pairs.set(key, [a]);
  }
  return [...pairs.values()].flat();
}
