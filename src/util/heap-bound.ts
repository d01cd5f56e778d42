import v8 from 'node:v8';
import vm from 'node:vm';

/**
 * Keeps a long-running process's heap near what it really holds. A runner starting thousands of tasks a second
 * allocates ~19 KB per task, and ~1.3 KB of it outlives two scavenges before it dies: V8 lets that garbage pile
 * up in the old generation until it is several times the live heap before it collects it, so a local launch of
 * 100,000 short tasks peaked at 153–159 MB of RSS with 12 MB live (a million tasks: 236 MB). While a bound is
 * held, the heap is looked at every CHECK_MS and fully collected once it holds SLACK_BYTES more than after the
 * last collection — about one collection of a few milliseconds every two seconds at that rate (peak RSS 132 MB,
 * the same wall time). Where a full collection cannot be asked for, nothing is done.
 */

/** How often the heap is looked at. */
const CHECK_MS = 500;
/** Growth of the used heap over its last low that makes a collection. */
const SLACK_BYTES = 12 * 1024 * 1024;

let holders = 0;
let timer: NodeJS.Timeout | undefined;
let floor = Number.POSITIVE_INFINITY;
let collect: (() => void) | null | undefined;
let collections = 0;

/** V8's full collection, exposed for this process (as jest's leak detector gets it), or null if it cannot be. */
function fullCollection(): (() => void) | null {
  if (collect !== undefined) return collect;
  try {
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as unknown;
    collect = typeof gc === 'function' ? (gc as () => void) : null;
  } catch {
    collect = null;
  }
  return collect;
}

/** One look at the heap: collect when it grew SLACK_BYTES over its last low. */
function check(gc: () => void): void {
  const used = v8.getHeapStatistics().used_heap_size;
  if (used < floor) floor = used;
  if (used - floor < SLACK_BYTES) return;
  gc();
  collections++;
  floor = v8.getHeapStatistics().used_heap_size;
}

/** Hold the bound while long work runs; the function returned lets go of it (the last holder stops the checks). */
export function holdHeapBound(): () => void {
  const gc = fullCollection();
  if (!gc) return () => {};
  holders++;
  if (!timer) {
    floor = Number.POSITIVE_INFINITY;
    timer = setInterval(() => check(gc), CHECK_MS);
    timer.unref();
  }
  let held = true;
  return () => {
    if (!held) return;
    held = false;
    if (--holders === 0 && timer) {
      clearInterval(timer);
      timer = undefined;
    }
  };
}

/** Who holds the bound, whether the heap is being looked at, and the full collections made so far. */
export function heapBoundState(): { holders: number; checking: boolean; collections: number } {
  return { holders, checking: timer !== undefined, collections };
}
