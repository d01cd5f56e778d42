import { parseDuration } from '../util/duration.js';
import { parseInteger } from '../util/integer.js';
import type { Range } from '../util/limits.js';
import { parseSize } from '../util/size.js';
import { parseWarnSignal, type WarnSignal } from '../util/warn-signal.js';

/**
 * Commander value parsers: every numeric, duration and size option of every command goes through one of these,
 * with its range from util/limits.ts, so a bad or out-of-range value is refused (exit 2, one line naming the
 * value and the range) while the flags are read, before anything is opened or written.
 */

/** A whole number within `range` (util/integer.ts). */
export function intOption(flag: string, range: Range): (value: string) => number {
  return (value: string) => parseInteger(value, flag, range);
}

/** A duration in seconds within `range` (util/duration.ts): `5`, `30s`, `2m`, `1:30:00`. */
export function durationOption(flag: string, range: Range): (value: string) => number {
  return (value: string) => parseDuration(value, flag, range);
}

/** A memory size in MiB (util/size.ts): `500M`, `4G`, `4GiB`. */
export function sizeOption(flag: string): (value: string) => number {
  return (value: string) => parseSize(value, flag);
}

/** `--signal SIG@TIME` (util/warn-signal.ts): a catchable signal and whole seconds before the time limit. */
export function signalOption(value: string): WarnSignal {
  return parseWarnSignal(value, '--signal');
}
