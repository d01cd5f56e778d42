import { usageError } from '../errors.js';

/** Commander value parser for a whole number ≥ min, naming the flag in the error. */
export function intOption(flag: string, min = 1): (value: string) => number {
  return (value: string) => {
    if (!/^\d+$/.test(value.trim()) || Number(value) < min) {
      throw usageError(
        `${flag} '${value}' is not a whole number of at least ${min}: give e.g. ${flag} ${Math.max(min, 2)}`,
      );
    }
    return Number(value);
  };
}

/** Commander value parser for a non-negative number of seconds. */
export function secondsOption(flag: string): (value: string) => number {
  return (value: string) => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isFinite(n) || n < 0) {
      throw usageError(`${flag} '${value}' is not a number of seconds: give e.g. ${flag} 5`);
    }
    return n;
  };
}
