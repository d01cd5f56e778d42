import { usageError } from '../errors.js';

/** Longest accepted jobname: it becomes a directory name and a scheduler job name. */
export const MAX_JOBNAME_LENGTH = 128;

const ALLOWED = /^[A-Za-z0-9_.+-]+$/;
const RULE = `use 1-${MAX_JOBNAME_LENGTH} letters, digits and _ - . +, starting with a letter, digit or _`;

/**
 * Check a jobname and return it. Jobnames become a directory under `.drover/jobs/`, a Slurm / Grid Engine job
 * name and the start of every tag, so only a portable set is allowed: ASCII letters, digits and `_ - . +`,
 * not starting with `.`, `-` or `+`, no `..`, at most MAX_JOBNAME_LENGTH characters. This refuses empty names,
 * `/`, whitespace and control characters.
 */
export function validateJobname(name: string, flag = '+jobname'): string {
  const shown = JSON.stringify(name);
  if (name.length === 0) throw usageError(`${flag} is empty; ${RULE}`);
  if (name.length > MAX_JOBNAME_LENGTH) {
    throw usageError(`${flag} ${shown} is longer than ${MAX_JOBNAME_LENGTH} characters; ${RULE}`);
  }
  if (!ALLOWED.test(name)) throw usageError(`${flag} ${shown} has a character that is not allowed; ${RULE}`);
  if (/^[.+-]/.test(name))
    throw usageError(`${flag} ${shown} starts with ${JSON.stringify(name[0])}; ${RULE}`);
  if (name.includes('..')) throw usageError(`${flag} ${shown} contains ".."; ${RULE}`);
  return name;
}
