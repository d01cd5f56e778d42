import { usageError } from '../errors.js';
import { cellText } from './table.js';

/**
 * The words that are not options: the job (`drover launch lr`, as `status lr`), then, after `--`, arguments
 * for sbatch or qsub. A second word before `--` is a mistake (an unquoted value: `--duration 5 minutes`).
 */
export function splitOperands(
  operands: readonly string[],
  argv: readonly string[],
): { job?: string; schedulerArgs: string[] } {
  const dash = argv.indexOf('--');
  const after = dash >= 0 ? Math.min(argv.length - dash - 1, operands.length) : 0;
  const before = operands.slice(0, operands.length - after);
  if (before.length > 1)
    throw usageError(
      `launch: unexpected word '${cellText(before[1]!)}' after the job '${cellText(before[0]!)}': quote an option's value that has spaces, and put scheduler arguments after --`,
    );
  return {
    ...(before[0] !== undefined ? { job: before[0] } : {}),
    schedulerArgs: operands.slice(before.length),
  };
}
