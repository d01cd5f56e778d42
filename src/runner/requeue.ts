import type { EndFields } from './end-state.js';
import { CHECKPOINTED, REQUEUE_EXIT_DEFAULT } from './reasons.js';

/** A launch's `--requeue` settings, as its runners and a pool's controller read them. */
export interface RequeueSettings {
  /** Requeues per task (`--requeue N`); omitted or 0: none. */
  requeue?: number;
  /** The exit code by which a task asks to be requeued; omitted: 75. */
  requeueExit?: number;
}

/**
 * `--requeue`: an attempt that hit its own time limit (`limitHit`), or exited with the requeue code (it
 * checkpointed), runs again while its task has requeues left (`done` made so far) and nothing stops it (`goOn`)
 * — its end keeps its true state (`timeout`; `failed` with that exit code and the reason `checkpointed`). One
 * that asked with none left says so in its reason. The one rule of the TypeScript runner and of a pool's
 * controller (which decides for its workers).
 */
export function requeueOf(
  s: RequeueSettings,
  end: EndFields,
  limitHit: boolean,
  done: number,
  goOn: boolean,
): { end: EndFields; requeue: boolean } {
  const most = s.requeue ?? 0;
  if (most === 0) return { end, requeue: false };
  const asked = end.state === 'failed' && end.exit_code === (s.requeueExit ?? REQUEUE_EXIT_DEFAULT);
  if (!(limitHit && end.state === 'timeout') && !asked) return { end, requeue: false };
  const left = done < most;
  const reason = !asked
    ? end.reason
    : left
      ? CHECKPOINTED
      : `${CHECKPOINTED}, no requeue left (--requeue ${most})`;
  return { end: { ...end, ...(reason !== undefined ? { reason } : {}) }, requeue: left && goOn };
}
