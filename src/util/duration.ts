import { usageError } from '../errors.js';

/**
 * Parse a duration as users write it for schedulers: seconds (`90`), with a unit (`90s`, `10m`, `2h`, `1d`),
 * `MM:SS`, `HH:MM:SS` or Slurm's `D-HH:MM:SS`. Returns seconds; `flag` names the option in errors.
 */
export function parseDuration(text: string, flag: string): number {
  const t = text.trim();
  const unit = /^(\d+(?:\.\d+)?)([smhd]?)$/.exec(t);
  if (unit) {
    const n = Number(unit[1]);
    const mult = { '': 1, s: 1, m: 60, h: 3600, d: 86400 }[unit[2] as '' | 's' | 'm' | 'h' | 'd'];
    if (n > 0) return n * mult;
  }
  const clock = /^(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+)$/.exec(t);
  if (clock) {
    const [, d, h, m, s] = clock;
    const secs = Number(d ?? 0) * 86400 + Number(h ?? 0) * 3600 + Number(m) * 60 + Number(s);
    if (secs > 0) return secs;
  }
  throw usageError(`${flag} '${text}' is not a duration: write e.g. 90s, 10m, 2h, 1:30:00 or 1-00:00:00`);
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
