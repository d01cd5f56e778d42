import { completeLines, type Parsed, unreadable, whole } from '../cluster/answer.js';
import { type CommandResult, oneLine, runCommand, runCommandAsync } from './commands.js';

/**
 * What drover reads of a Grid Engine cluster's global configuration (`qconf -sconf`): the most array tasks one
 * submission may have (`max_aj_tasks`). Read once per launch, as Slurm's MaxArraySize is.
 */

/** Grid Engine's default `max_aj_tasks`, used when the cluster's own value cannot be read. */
export const DEFAULT_MAX_AJ_TASKS = 75000;

/**
 * `max_aj_tasks` from `qconf -sconf` output (long values are wrapped with a trailing `\`): the limit, Infinity
 * when it is 0 (Grid Engine: no limit), or why the answer is not whole (cut inside a line, or without the line).
 */
export function parseMaxAjTasks(text: string): Parsed<number> {
  const lines = completeLines(text);
  if (!lines.ok) return lines;
  // `#global:`, `name value` lines, and the continuations of a value wrapped with a trailing `\`.
  if (lines.value.some((l) => !/^(#\S*:|[a-z_][a-z0-9_]*[ \t]+\S.*|[ \t]+\S.*|)$/.test(l)))
    return unreadable('a line is not a setting');
  const joined = lines.value.join('\n').replace(/\\\n\s*/g, '');
  const m = /^max_aj_tasks[ \t]+(\d+)[ \t]*$/m.exec(joined);
  if (!m) return unreadable('it has no max_aj_tasks');
  const n = Number(m[1]);
  return whole(n === 0 ? Number.POSITIVE_INFINITY : n);
}

/** The cluster's array limit and, when it had to be assumed, a warning saying so. */
export interface ArrayLimit {
  /** Most elements in one `qsub -t` (Infinity: no limit). */
  maxAjTasks: number;
  warning?: string;
}

/** Read the cluster's `max_aj_tasks`: one `qconf -sconf`; Grid Engine's default 75000, with a warning, if it can't. */
export function readArrayLimit(): ArrayLimit {
  return arrayLimitOf(runCommand('qconf', ['-sconf']));
}

/** The same without holding the event loop. */
export async function readArrayLimitAsync(): Promise<ArrayLimit> {
  return arrayLimitOf(await runCommandAsync('qconf', ['-sconf']));
}

function arrayLimitOf(r: CommandResult): ArrayLimit {
  const n = r.code === 0 ? parseMaxAjTasks(r.stdout) : undefined;
  if (n?.ok) return { maxAjTasks: n.value };
  const why = n
    ? `qconf -sconf gave an answer drover cannot read whole: ${n.why}`
    : `qconf -sconf: ${oneLine(r)}`;
  return {
    maxAjTasks: DEFAULT_MAX_AJ_TASKS,
    warning: `could not read the cluster's max_aj_tasks (${why}): arrays split as for Grid Engine's default ${DEFAULT_MAX_AJ_TASKS}`,
  };
}
