import os from 'node:os';
import { usageError } from '../errors.js';
import { parseDuration } from './duration.js';
import { formatSeconds, type Range } from './limits.js';
import { quoted } from './quote.js';

/**
 * `--signal SIG@TIME`: the signal each task gets TIME before its time limit, so that it can save its work and
 * exit. SIG is a signal Node knows (`os.constants.signals`), with or without `SIG`, in any case; TIME is a
 * duration (util/duration.ts) of whole seconds. KILL and STOP are refused: a task cannot catch them.
 */
export interface WarnSignal {
  /** The signal's name as Node spells it: `SIGUSR1`. */
  signal: NodeJS.Signals;
  /** Seconds before the limit (whole, at least 1). */
  seconds: number;
}

/** The times `--signal` takes: whole seconds up to the longest time limit. */
export const WARN_SECONDS: Range = { min: 1, max: 365 * 86_400, unit: 's' };

/** Signals a task cannot catch: a warning by them would be a kill. */
const UNCATCHABLE = new Set(['SIGKILL', 'SIGSTOP']);

/** Parse `SIG@TIME` (see WarnSignal); `flag` names the option in errors (exit 2, one line). */
export function parseWarnSignal(text: string, flag = '--signal'): WarnSignal {
  const at = text.lastIndexOf('@');
  if (at < 0)
    throw usageError(
      `${flag} ${quoted(text)} has no '@': write SIG@TIME, e.g. USR1@5m (SIG, TIME before the limit)`,
    );
  const name = text.slice(0, at);
  const time = text.slice(at + 1).trim();
  const signal = signalName(name, text, flag);
  if (time === '')
    throw usageError(`${flag} ${quoted(text)} has no time after '@': write SIG@TIME, e.g. ${name}@5m`);
  const seconds = parseDuration(time, `${flag} ${quoted(text)}: time`, WARN_SECONDS);
  if (!Number.isInteger(seconds))
    throw usageError(
      `${flag} ${quoted(text)}: time ${quoted(time)} is not whole seconds: give e.g. 90s or 2m`,
    );
  return { signal, seconds };
}

/** The Node name of a signal given as `USR1`, `sigusr1` or `SIGUSR1`; refused if unknown or uncatchable. */
function signalName(name: string, text: string, flag: string): NodeJS.Signals {
  if (name === '')
    throw usageError(`${flag} ${quoted(text)} has no signal before '@': write SIG@TIME, e.g. USR1@5m`);
  const upper = name.toUpperCase();
  const full = upper.startsWith('SIG') ? upper : `SIG${upper}`;
  const known = /^SIG[A-Z0-9]+$/.test(full) && Object.hasOwn(os.constants.signals, full);
  if (!known)
    throw usageError(
      `${flag} ${quoted(text)}: ${quoted(name)} is not a signal: give a name such as USR1, USR2, TERM, INT or HUP`,
    );
  if (UNCATCHABLE.has(full))
    throw usageError(
      `${flag} ${quoted(text)}: ${full} cannot be caught, so it warns nothing: give e.g. USR1 or TERM`,
    );
  return full as NodeJS.Signals;
}

/** The option as the user can type it again: `USR1@5m`. */
export function formatWarnSignal(w: WarnSignal): string {
  return `${w.signal.slice(3)}@${formatSeconds(w.seconds)}`;
}

/**
 * Refuse a warning that no limit times, or that is not below the limit: `limit` is the shortest time limit a
 * task has (seconds), `limitFlag` the option that set it.
 */
export function checkWarnSignal(
  w: WarnSignal,
  limit: number | undefined,
  limitFlag: string,
  hint: string,
): void {
  const given = `--signal ${formatWarnSignal(w)}`;
  if (limit === undefined)
    throw usageError(`${given} needs a time limit to warn before: add ${hint}, or drop --signal`);
  if (w.seconds >= limit)
    throw usageError(
      `${given}: ${formatSeconds(w.seconds)} is not below the time limit (${limitFlag} ${formatSeconds(limit)}): give a shorter time or a longer limit`,
    );
}
