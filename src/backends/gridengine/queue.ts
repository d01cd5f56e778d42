import { unreadableWarning } from '../cluster/answer.js';
import { qstatXml, runCommandAsync } from './commands.js';
import { parseQstatXml, type QueueSnapshot } from './parse.js';

/**
 * What Grid Engine has queued or running for the caller: one `qstat -xml` shared by every launch reconciled
 * within a second (a refresh of several launches, the polling loop of `drover cancel`).
 */

const FRESH_MS = 1000;
let cached: { at: number; queue: QueueSnapshot } | undefined;

/**
 * The caller's array elements in Grid Engine, or undefined when qstat cannot be run or its answer cannot be read
 * whole (then `warn` is told: nobody can say which elements are gone, and nothing should be judged from it).
 */
export function queueSnapshot(warn?: (message: string) => void): QueueSnapshot | undefined {
  if (cached && Date.now() - cached.at < FRESH_MS) return cached.queue;
  return snapshotOf(qstatXml(), warn);
}

/** queueSnapshot, without holding the caller's thread while qstat runs (the controller). */
export async function queueSnapshotAsync(
  warn?: (message: string) => void,
): Promise<QueueSnapshot | undefined> {
  if (cached && Date.now() - cached.at < FRESH_MS) return cached.queue;
  const r = await runCommandAsync('qstat', ['-xml']);
  return snapshotOf(r.code === 0 ? r.stdout : undefined, warn);
}

function snapshotOf(xml: string | undefined, warn?: (message: string) => void): QueueSnapshot | undefined {
  if (xml === undefined) return undefined;
  const parsed = parseQstatXml(xml);
  if (!parsed.ok) {
    warn?.(
      unreadableWarning(
        'qstat -xml',
        parsed.why,
        'task states stay as their runners recorded them until it does',
      ),
    );
    return undefined;
  }
  cached = { at: Date.now(), queue: parsed.value };
  return cached.queue;
}

/** Forget the last snapshot (after qsub or qdel changed the queue). */
export function forgetQueue(): void {
  cached = undefined;
}
