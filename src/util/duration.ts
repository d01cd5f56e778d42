import { usageError } from '../errors.js';
import { describeRange, type Range } from './limits.js';
import { quoted } from './quote.js';

/**
 * The one grammar of durations, for every option and backend (docs/cli.md, "Durations"):
 * - a number of seconds, whole or decimal, with an optional unit: `90`, `90s`, `1.5m`, `2h`, `1d`;
 * - a clock as Slurm writes it: `MM:SS`, `HH:MM:SS`, `D-HH`, `D-HH:MM`, `D-HH:MM:SS`. The first field may be
 *   as large as the range allows (`90:00`, `48:00:00`); minutes and seconds after it are below 60, hours after
 *   days below 24.
 * Parsed once into seconds; each backend renders them in its scheduler's syntax.
 */

const UNIT = /^([0-9]+(?:\.[0-9]+)?)([smhd]?)$/;
const CLOCK = /^(?:([0-9]+)-([0-9]+)(?::([0-9]+)(?::([0-9]+))?)?|([0-9]+)(?::([0-9]+))?:([0-9]+))$/;
const MULT = { '': 1, s: 1, m: 60, h: 3600, d: 86_400 } as const;

/** Seconds of a duration, or undefined when the text is not one (fields out of their clock range included). */
function seconds(t: string): number | undefined {
  const unit = UNIT.exec(t);
  if (unit) return Number(unit[1]) * MULT[unit[2] as keyof typeof MULT];
  const c = CLOCK.exec(t);
  if (!c) return undefined;
  const n = (s: string | undefined) => (s === undefined ? 0 : Number(s));
  if (c[1] !== undefined) {
    // D-HH[:MM[:SS]]
    const [d, h, m, s] = [n(c[1]), n(c[2]), n(c[3]), n(c[4])];
    if (h >= 24 || m >= 60 || s >= 60) return undefined;
    return d * 86_400 + h * 3600 + m * 60 + s;
  }
  // MM:SS or HH:MM:SS (the first field unbounded)
  const [a, b, s] = [n(c[5]), n(c[6]), n(c[7])];
  if (s >= 60 || (c[6] !== undefined && b >= 60)) return undefined;
  return c[6] !== undefined ? a * 3600 + b * 60 + s : a * 60 + s;
}

/** Parse a duration (grammar above) to seconds within `range`; `flag` names the option in errors. */
export function parseDuration(text: string, flag: string, range: Range): number {
  const secs = seconds(text.trim());
  if (secs === undefined) {
    throw usageError(
      `${flag} ${quoted(text)} is not a duration: write e.g. 90s, 10m, 2h, 1.5d, 1:30:00 or 2-00:00:00, from ${describeRange(range)}`,
    );
  }
  if (!(secs >= range.min && secs <= range.max)) {
    throw usageError(`${flag} ${quoted(text)} is out of range: give a duration from ${describeRange(range)}`);
  }
  return secs;
}

/** Seconds as Slurm's `D-HH:MM:SS` (also accepted by Grid Engine as h_rt after dropping days). */
export function formatClock(seconds: number): string {
  const s = Math.ceil(seconds);
  const d = Math.floor(s / 86400);
  const hh = String(Math.floor((s % 86400) / 3600)).padStart(2, '0');
  const mm = String(Math.floor((s % 3600) / 60)).padStart(2, '0');
  const ss = String(s % 60).padStart(2, '0');
  return d > 0 ? `${d}-${hh}:${mm}:${ss}` : `${hh}:${mm}:${ss}`;
}
