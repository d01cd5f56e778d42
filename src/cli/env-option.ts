import { usageError } from '../errors.js';
import { cellText } from './table.js';

/** Most variables one launch may set, and the longest value (what the server's launch route accepts). */
export const ENV_LIMITS = { count: 1000, valueChars: 100_000 } as const;

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * `--env NAME=VALUE`, repeatable: the variables every task of the launch gets, on every backend and on pools.
 * The value is passed as is (spaces, quotes, `$(...)` reach the task as text, never through a shell). Names
 * drover sets itself (`DROVER_*`) are refused, as is a name given twice with different values.
 */
export function envOption(
  value: string,
  previous: Record<string, string> | undefined,
): Record<string, string> {
  const eq = value.indexOf('=');
  const name = eq < 0 ? value : value.slice(0, eq);
  if (eq < 0)
    throw usageError(`--env '${cellText(value)}' has no '=': give NAME=VALUE (NAME= for an empty value)`);
  if (!NAME.test(name))
    throw usageError(
      `--env name '${cellText(name)}' is not a variable name: use letters, digits and _, not starting with a digit`,
    );
  if (name.startsWith('DROVER_'))
    throw usageError(`--env ${name}: drover sets the DROVER_ variables itself: pick another name`);
  const text = value.slice(eq + 1);
  if (text.length > ENV_LIMITS.valueChars)
    throw usageError(
      `--env ${name}: the value has ${text.length} characters, more than ${ENV_LIMITS.valueChars}`,
    );
  const env = { ...(previous ?? {}) };
  if (Object.hasOwn(env, name) && env[name] !== text)
    throw usageError(`--env ${name} is given twice with different values: give it once`);
  env[name] = text;
  if (Object.keys(env).length > ENV_LIMITS.count)
    throw usageError(
      `--env given for more than ${ENV_LIMITS.count} variables: put them in a file the tasks read`,
    );
  return env;
}
