import { usageError } from '../errors.js';
import { MEMORY_MIB, type Range } from './limits.js';
import { quoted } from './quote.js';

/**
 * The one grammar of memory sizes, for every backend and the pools (docs/cli.md, "Sizes"): a number, whole or
 * decimal, and a binary unit K, M, G, T or P (powers of 1024), optionally followed by `B` or `iB`, in any case:
 * `500M`, `4G`, `4GB`, `4GiB`, `1.5t`. A bare number is gigabytes, as in onager (`--mem 2` is 2G). Parsed once
 * into whole mebibytes (rounded up); each backend renders them in its scheduler's syntax.
 */

const SIZE = /^([0-9]+(?:\.[0-9]+)?)(?:([KMGTP])(?:I?B)?)?$/;
const MIB_PER: Record<string, number> = { K: 1 / 1024, M: 1, G: 1024, T: 1024 ** 2, P: 1024 ** 3 };

/** Parse a memory size (grammar above) to MiB within `range` (default 1M to 1P); `flag` names the option. */
export function parseSize(text: string, flag: string, range: Range = MEMORY_MIB): number {
  const m = SIZE.exec(text.trim().toUpperCase());
  if (!m) {
    throw usageError(
      `${flag} ${quoted(text)} is not a memory size: write e.g. 500M, 4G, 4GiB or 1.5T (a bare number is G)`,
    );
  }
  // The range is of what was asked, not of it rounded up to whole MiB: `0.5K` is below 1M, not 1M.
  const exact = Number(m[1]) * MIB_PER[m[2] ?? 'G']!;
  const mib = Math.ceil(exact);
  if (!(exact >= range.min && mib <= range.max)) {
    throw usageError(
      `${flag} ${quoted(text)} is out of range: give a size from ${formatSize(range.min)} to ${formatSize(range.max)}`,
    );
  }
  return mib;
}

const UNITS = [
  ['P', 1024 ** 3],
  ['T', 1024 ** 2],
  ['G', 1024],
] as const;

/**
 * Whole MiB as the shortest exact text in units up to `largest`: `4G`, `1536M`, `1P` (schedulers that know
 * no P or T pass `G`). parseSize reads it back to the same number.
 */
export function formatSize(mib: number, largest: 'P' | 'T' | 'G' = 'P'): string {
  for (const [unit, per] of UNITS.slice(UNITS.findIndex(([u]) => u === largest))) {
    if (mib % per === 0) return `${mib / per}${unit}`;
  }
  return `${mib}M`;
}
