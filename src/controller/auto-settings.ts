import { DroverError } from '../errors.js';
import type { CreatePoolRequest } from '../protocol/messages.js';
import { COUNTS, formatSeconds, SECONDS } from '../util/limits.js';
import type { AutoSettings } from './allocate.js';

/** `--auto`'s defaults (docs/pools.md): HyperQueue's backlog and idle timeout, and a small cap on workers. */
export const AUTO_DEFAULTS: AutoSettings = { maxWorkers: 4, minWorkers: 0, idleTimeout: 300, backlog: 1 };

/**
 * A pool request's automatic allocation settings, checked (usage errors name the value and what to do), or
 * undefined when it has none. Checked again here for API clients that skip the CLI.
 */
export function autoSettings(req: CreatePoolRequest): AutoSettings | undefined {
  if (req.auto === undefined) {
    if (req.workers < 1)
      throw new DroverError('usage', `--workers ${req.workers}: a pool needs 1 worker or more, or --auto`);
    return undefined;
  }
  if (req.backend === 'local')
    throw new DroverError(
      'usage',
      '--auto submits workers to a scheduler: add --backend slurm or --backend gridengine (local pools take --workers N)',
    );
  if (req.workers !== 0)
    throw new DroverError(
      'usage',
      `--workers ${req.workers} and --auto together: --auto starts workers as tasks queue; give --max-workers ${req.workers} instead`,
    );
  const a = req.auto;
  const s: AutoSettings = {
    maxWorkers: a.max_workers ?? AUTO_DEFAULTS.maxWorkers,
    minWorkers: a.min_workers ?? AUTO_DEFAULTS.minWorkers,
    idleTimeout: a.idle_timeout ?? AUTO_DEFAULTS.idleTimeout,
    backlog: a.backlog ?? AUTO_DEFAULTS.backlog,
  };
  const range = COUNTS.workers;
  if (!(s.maxWorkers >= range.min && s.maxWorkers <= range.max))
    throw new DroverError(
      'usage',
      `--max-workers ${s.maxWorkers} is out of range: give ${range.min} to ${range.max}`,
    );
  if (s.minWorkers > s.maxWorkers)
    throw new DroverError(
      'usage',
      `--min-workers ${s.minWorkers} is more than --max-workers ${s.maxWorkers}: lower it, or raise --max-workers`,
    );
  const idle = SECONDS.idleTimeout;
  if (!(s.idleTimeout >= idle.min && s.idleTimeout <= idle.max))
    throw new DroverError(
      'usage',
      `--idle-timeout ${s.idleTimeout}s is out of range: give ${formatSeconds(idle.min)} to ${formatSeconds(idle.max)}`,
    );
  return s;
}
