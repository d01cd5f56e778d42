/**
 * Timers of any length. Node's setTimeout takes at most 2^31 - 1 ms (about 24.8 days): a longer delay fires
 * after 1 ms instead, so a `--task-timeout 25d` would time every task out at once. Every timer whose delay a
 * user chose goes through setLongTimeout, which waits in steps of at most that limit.
 */

/** The longest delay Node's setTimeout keeps (ms). */
export const NODE_TIMER_LIMIT_MS = 2 ** 31 - 1;

/** A timer made by setLongTimeout. */
export interface LongTimeout {
  /** Cancel it (no effect once it fired). */
  clear(): void;
  /** Let the process exit while it waits (as Timeout.unref). */
  unref(): LongTimeout;
}

/**
 * Call `fn` once after `ms` milliseconds, however long that is (Infinity: never). `step` is the longest single
 * wait (default Node's limit; tests pass a small one to see the steps chain).
 */
export function setLongTimeout(fn: () => void, ms: number, step = NODE_TIMER_LIMIT_MS): LongTimeout {
  if (Number.isNaN(ms) || ms < 0) throw new RangeError(`setLongTimeout: bad delay ${ms}`);
  const due = performance.now() + ms;
  let timer: NodeJS.Timeout;
  let unref = false;
  const arm = () => {
    const left = due - performance.now();
    timer = left > step ? setTimeout(arm, step) : setTimeout(fn, Math.max(0, Math.ceil(left)));
    if (unref) timer.unref();
  };
  arm();
  const handle: LongTimeout = {
    clear: () => clearTimeout(timer),
    unref: () => {
      unref = true;
      timer.unref();
      return handle;
    },
  };
  return handle;
}
