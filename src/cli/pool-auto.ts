import type { Command } from 'commander';
import { AUTO_DEFAULTS } from '../controller/auto-settings.js';
import { usageError } from '../errors.js';
import type { AutoRequest } from '../protocol/messages.js';
import { COUNTS, SECONDS } from '../util/limits.js';
import { durationOption, intOption } from './parse.js';

/** `pool create --auto` and its limits, as parsed. */
export interface AutoFlags {
  auto?: boolean;
  maxWorkers?: number;
  minWorkers?: number;
  /** Seconds. */
  idleTimeout?: number;
  backlog?: number;
}

/** The flags of automatic allocation on `pool create` (docs/pools.md, "Automatic allocation"). */
export function autoOptions(c: Command): Command {
  return c
    .option('--auto', 'start workers as Slurm / Grid Engine allocations while tasks queue; idle ones leave')
    .option(
      '--max-workers <n>',
      `with --auto: most workers at once (default ${AUTO_DEFAULTS.maxWorkers})`,
      intOption('--max-workers', COUNTS.workers),
    )
    .option(
      '--min-workers <n>',
      'with --auto: idle workers that stay (default 0)',
      intOption('--min-workers', COUNTS.workersOrNone),
    )
    .option(
      '--idle-timeout <time>',
      'with --auto: how long a worker may idle before it leaves (default 5m)',
      durationOption('--idle-timeout', SECONDS.idleTimeout),
    )
    .option(
      '--backlog <n>',
      'with --auto: most allocations waiting in the scheduler queue (default 1)',
      intOption('--backlog', COUNTS.backlog),
    );
}

const ONLY_AUTO = [
  ['maxWorkers', '--max-workers'],
  ['minWorkers', '--min-workers'],
  ['idleTimeout', '--idle-timeout'],
  ['backlog', '--backlog'],
] as const;

/** The request's `auto` part, or undefined without --auto; its flags without --auto are a usage error. */
export function autoRequest(o: AutoFlags & { workers?: number; backend: string }): AutoRequest | undefined {
  if (!o.auto) {
    const stray = ONLY_AUTO.find(([k]) => o[k] !== undefined);
    if (stray) throw usageError(`${stray[1]} is for --auto pools: add --auto, or give --workers N instead`);
    return undefined;
  }
  if (o.backend === 'local')
    throw usageError('--auto submits workers to a scheduler: add --backend slurm or --backend gridengine');
  if (o.workers !== undefined)
    throw usageError(
      `--workers ${o.workers} and --auto together: --auto starts workers as tasks queue; give --max-workers ${o.workers} instead`,
    );
  if (o.minWorkers !== undefined && o.minWorkers > (o.maxWorkers ?? AUTO_DEFAULTS.maxWorkers))
    throw usageError(
      `--min-workers ${o.minWorkers} is more than --max-workers ${o.maxWorkers ?? `${AUTO_DEFAULTS.maxWorkers} (the default)`}: lower it, or raise --max-workers`,
    );
  return {
    ...(o.maxWorkers !== undefined ? { max_workers: o.maxWorkers } : {}),
    ...(o.minWorkers !== undefined ? { min_workers: o.minWorkers } : {}),
    ...(o.idleTimeout !== undefined ? { idle_timeout: o.idleTimeout } : {}),
    ...(o.backlog !== undefined ? { backlog: o.backlog } : {}),
  };
}
