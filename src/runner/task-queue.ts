import { SKIP_MANY_RANGES } from '../protocol/records.js';
import { RangeBuilder } from '../util/id-ranges.js';
import { DEFAULT_BACKOFF, retryDelay } from './backoff.js';
import type { GroupTask } from './group.js';
import type { Carry } from './restart.js';

/** An attempt not handed to the starter yet: queued, waiting for its retry, or still in the group's task file. */
export interface Queued {
  task: GroupTask;
  attempt: number;
  retry: number;
  /** `--requeue`s of the task so far in this runner (its attempts after one resume: DROVER_RESUME=1). */
  requeues?: number;
}

/**
 * The attempts a runner has not handed to its starter yet, in the order they are to start: first the queue
 * (retries due, attempts held back, tasks added to a kept-open runner), then the group's own tasks not taken yet.
 * Retries wait here for their backoff until they are due.
 */
export class TaskQueue {
  private readonly queue: Queued[] = [];
  /**
   * The group's tasks not handed out yet, taken as slots free up (a task file is read a chunk at a time, so a
   * runner holds a few of a million tasks); undefined once all are taken.
   */
  private pending: Iterator<GroupTask> | undefined;
  /** Tasks a cancel request named that are still in `pending`: skipped when their turn comes. */
  private readonly cancelledAhead = new Set<number>();
  private readonly waiting = new Map<number, { q: Queued; timer: NodeJS.Timeout }>();

  /**
   * `skip`: a task of the group a cancel request named comes up (it is recorded cancelled). `due`: a retry's
   * backoff is over and it is first in the queue. `carried`: how tasks an earlier run of the element recorded go
   * on here (runner/restart.ts): from a later attempt, or (null) not at all.
   */
  constructor(
    tasks: Iterable<GroupTask>,
    private readonly skip: (task: number) => void,
    private readonly due: () => void,
    private readonly carried?: ReadonlyMap<number, Carry | null>,
  ) {
    this.pending = tasks[Symbol.iterator]();
  }

  /** True when nothing is queued, waiting or left in the group's tasks. */
  get empty(): boolean {
    return this.queue.length === 0 && !this.pending && this.waiting.size === 0;
  }

  /** The next attempt to hand to the starter, if any. */
  next(): Queued | undefined {
    return this.queue.shift() ?? this.takePending();
  }

  /** Tasks added to a kept-open runner: after the group's own and those queued. */
  add(tasks: readonly GroupTask[]): void {
    this.drainPending((q) => this.queue.push(q));
    for (const task of tasks) this.queue.push({ task, attempt: task.attempt, retry: 0 });
  }

  /** An attempt held back while records cannot be written: it starts first when they can. */
  putBack(q: Queued): void {
    this.queue.unshift(q);
  }

  /** The attempt after `q`, requeued (`--requeue`): first in the queue, at once (no backoff: nothing failed). */
  requeue(q: Queued): void {
    this.queue.unshift({
      task: q.task,
      attempt: q.attempt + 1,
      retry: q.retry,
      requeues: (q.requeues ?? 0) + 1,
    });
  }

  /** The attempt after `q`: it waits its backoff (from `base` seconds), then goes first in the queue. */
  retry(q: Queued, base: number): void {
    const next: Queued = { ...q, attempt: q.attempt + 1, retry: q.retry + 1 };
    const delay = retryDelay(next.retry, { ...DEFAULT_BACKOFF, base });
    const timer = setTimeout(() => {
      this.waiting.delete(next.task.id);
      this.queue.unshift(next);
      this.due();
    }, delay * 1000);
    this.waiting.set(next.task.id, { q: next, timer });
  }

  /** Take queued attempts that `hit` names out of the queue, last first; `each` gets each as it is taken. */
  removeQueued(hit: (q: Queued) => boolean, each: (q: Queued) => void): void {
    for (let i = this.queue.length - 1; i >= 0; i--) {
      const q = this.queue[i]!;
      if (!hit(q)) continue;
      this.queue.splice(i, 1);
      each(q);
    }
  }

  /** Take retries that `hit` names (by task id) out of their wait; `each` gets each task's id as it is taken. */
  removeWaiting(hit: (task: number) => boolean, each: (task: number) => void): void {
    for (const [id, w] of this.waiting) {
      if (!hit(id)) continue;
      clearTimeout(w.timer);
      this.waiting.delete(id);
      each(id);
    }
  }

  /** Skip these tasks when their turn in the group's tasks comes (none once all are taken). */
  cancelAhead(tasks: Iterable<number>): void {
    if (this.pending) for (const id of tasks) this.cancelledAhead.add(id);
  }

  /** Skip now the group's tasks that a cancel request named and that are not taken yet (the others stay). */
  skipCancelledAhead(): void {
    while (this.cancelledAhead.size > 0 && this.takePending());
  }

  /** Drop everything: nothing more starts. */
  clear(): void {
    this.queue.length = 0;
    this.dropPending();
    for (const w of this.waiting.values()) clearTimeout(w.timer);
    this.waiting.clear();
  }

  /** Take every one of the group's tasks not taken yet. */
  drainPending(each: (q: Queued) => void): void {
    for (let q = this.takePending(); q; q = this.takePending()) each(q);
  }

  /**
   * Take every one of the group's tasks not taken yet as ranges of ids: `each` gets each id as it is taken,
   * `batch` up to SKIP_MANY_RANGES ranges at a time (what one skip-many record holds).
   */
  drainRanges(each: (task: number) => void, batch: (ranges: [number, number][]) => void): void {
    const ids = new RangeBuilder();
    const flush = () => {
      if (ids.length === 0) return;
      batch(ids.take());
    };
    this.drainPending((q) => {
      ids.add(q.task.id);
      each(q.task.id);
      if (ids.length >= SKIP_MANY_RANGES) flush();
    });
    flush();
  }

  /** The group's next task to run (those a cancel request named are recorded `cancelled` on the way). */
  private takePending(): Queued | undefined {
    while (this.pending) {
      let next: IteratorResult<GroupTask>;
      try {
        next = this.pending.next();
      } catch (err) {
        // A damaged task file: the tasks before the damage ran; those after it never start and have no record
        // (the launch's check of its runner records them cancelled once the runner is gone).
        process.stderr.write(`drover: ${(err as Error).message}: the tasks after it do not run\n`);
        this.dropPending();
        return undefined;
      }
      if (next.done) {
        this.dropPending();
        return undefined;
      }
      const task = next.value;
      const carry = this.carried?.get(task.id);
      if (carry === null) continue;
      if (this.cancelledAhead.delete(task.id)) this.skip(task.id);
      else if (carry) return { task, ...carry };
      else return { task, attempt: task.attempt, retry: 0 };
    }
    return undefined;
  }

  /** No more of the group's tasks are taken (all taken, or the runner is stopping): its file is closed. */
  private dropPending(): void {
    this.pending?.return?.();
    this.pending = undefined;
    this.cancelledAhead.clear();
  }
}
