import { usageError } from '../errors.js';
import { describeRange, type Range } from './limits.js';
import { quoted } from './quote.js';

/**
 * Parse a whole number as users type it: ASCII digits only (leading zeros allowed, surrounding blanks ignored),
 * within `range`. Anything else — signs, exponents (`1e3`), hex (`0x10`), fractions, other scripts' digits,
 * values past 2^53 — is a usage error naming `what` (the flag), the value and the range.
 */
export function parseInteger(text: string, what: string, range: Range): number {
  const t = text.trim();
  if (!/^[0-9]+$/.test(t)) {
    throw usageError(
      `${what} ${quoted(text)} is not a whole number: give one from ${describeRange(range)}, e.g. ${what} ${example(range)}`,
    );
  }
  const digits = t.replace(/^0+(?=[0-9])/, '');
  const n = digits.length > 15 ? Number.POSITIVE_INFINITY : Number(digits);
  if (n < range.min || n > range.max) {
    throw usageError(
      `${what} ${quoted(text)} is out of range: give a whole number from ${describeRange(range)}`,
    );
  }
  return n;
}

/** A value worth showing in a message: 2 when the range has it. */
function example(r: Range): number {
  return Math.min(r.max, Math.max(r.min, 2));
}
