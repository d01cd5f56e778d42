import { qstatXml } from './commands.js';
import { parseQstatXml, type QueueSnapshot } from './parse.js';

/**
 * What Grid Engine has queued or running for the caller: one `qstat -xml` shared by every launch reconciled
 * within a second (a refresh of several launches, the polling loop of `drover cancel`).
 */

const FRESH_MS = 1000;
let cached: { at: number; queue: QueueSnapshot } | undefined;

/** The caller's array elements in Grid Engine, or undefined when qstat cannot be run. */
export function queueSnapshot(): QueueSnapshot | undefined {
  if (cached && Date.now() - cached.at < FRESH_MS) return cached.queue;
  const xml = qstatXml();
  if (xml === undefined) return undefined;
  cached = { at: Date.now(), queue: parseQstatXml(xml) };
  return cached.queue;
}

/** Forget the last snapshot (after qsub or qdel changed the queue). */
export function forgetQueue(): void {
  cached = undefined;
}
