import type { PollAnswer } from '../protocol/messages.js';
import type { LiveWorker } from './live.js';

/** What a worker's poll is answered, from what waits for it in memory (pure). */

/** True when something waits to be sent to the worker (tasks, cancels, a stop). */
export function hasWork(w: LiveWorker): boolean {
  return w.outTasks.length > 0 || w.outCancel.length > 0 || w.stop !== undefined;
}

/**
 * The answer to a worker's poll: what waits for it, taken (it is sent once). Undefined when nothing waits,
 * unless `force` (a poll that timed out, or is replaced, is answered even with nothing).
 */
export function takeAnswer(w: LiveWorker, force = false): PollAnswer | undefined {
  if (!force && !hasWork(w)) return undefined;
  const a: PollAnswer = { tasks: w.outTasks, cancel: w.outCancel };
  if (w.stop) a.stop = w.stop;
  w.outTasks = [];
  w.outCancel = [];
  return a;
}
