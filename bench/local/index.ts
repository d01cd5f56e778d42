import { benchScaleOut } from '../pool.js';
import { SCALE_WORKERS } from '../pool-scale.js';
import { notRun, type Result } from '../result.js';
import { BenchError } from '../util.js';
import { benchDashboard } from './dashboard.js';
import { benchDetachedStatus } from './detached-status.js';
import { benchLaunch } from './launch.js';
import { benchList } from './list.js';
import { benchListJson } from './list-json.js';
import { benchPrelaunch } from './prelaunch.js';
import { benchSpawnLimit } from './spawn-limit.js';
import { benchStatus } from './status.js';
import { benchVersion } from './version.js';

/** The benchmarks of local mode, in the order they run (names for `--only`). */
export const LOCAL_BENCHMARKS = [
  'launch',
  'version',
  'status',
  'detached-status',
  'prelaunch',
  'list',
  'list-json',
  'dashboard',
  'spawn-limit',
  'pool-scale',
] as const;
export type LocalBenchmark = (typeof LOCAL_BENCHMARKS)[number];

export interface LocalOptions {
  /** Repetitions of the heavy benchmarks (launch, prelaunch); the light ones run 6× as many. */
  repeat: number;
  /** Only these benchmarks (default: all). */
  only: ReadonlySet<LocalBenchmark>;
  /** Fill the 100,000-task ledger with a real launch instead of synthetic runner records. */
  realStatusLaunch: boolean;
}

/** Run the local benchmarks; `report` is called with each result as soon as it is known. */
export function runLocal(opts: LocalOptions, report: (r: Result) => void): Result[] {
  const all: Result[] = [];
  const steps: Record<LocalBenchmark, { title: string; fn: () => Result[] }> = {
    launch: { title: 'launch 2000 × /bin/true', fn: () => benchLaunch(opts.repeat) },
    version: { title: 'drover --version', fn: () => benchVersion(opts.repeat) },
    status: {
      title: 'drover status on 100,000 tasks',
      fn: () => benchStatus(opts.repeat, opts.realStatusLaunch),
    },
    'detached-status': {
      title: 'first status after a detached 100,000-task launch',
      fn: () => benchDetachedStatus(opts.repeat),
    },
    prelaunch: { title: 'prelaunch 100,000 and 1,000,000 tasks', fn: () => benchPrelaunch(opts.repeat) },
    list: { title: 'drover list on 100,000 tasks', fn: () => benchList(opts.repeat) },
    'list-json': { title: 'drover list --json on 100,000 tasks', fn: () => benchListJson(opts.repeat) },
    dashboard: { title: 'dashboard page of 100,000 tasks', fn: () => benchDashboard(opts.repeat) },
    'spawn-limit': {
      title: 'launch 10,000 × /bin/true vs a C spawn loop',
      fn: () => benchSpawnLimit(opts.repeat),
    },
    // Issue 14's table has the controller's scale-out beside the local rows: one `npm run bench` prints them all
    // (the same step as `pool` mode's `scale`, in a server of its own).
    'pool-scale': {
      title: `the controller's scale-out through ${SCALE_WORKERS} simulated workers`,
      fn: () => benchScaleOut(),
    },
  };
  for (const name of LOCAL_BENCHMARKS) {
    if (!opts.only.has(name)) continue;
    let results: Result[];
    try {
      results = steps[name].fn();
    } catch (err) {
      if (!(err instanceof BenchError)) throw err;
      results = [notRun(`local.${name}`, steps[name].title, 'FAILED', err.message)];
    }
    for (const r of results) {
      report(r);
      all.push(r);
    }
  }
  return all;
}
