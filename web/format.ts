// How the dashboard writes times, durations and result values.

/** A unix time as the browser's local date and time; – for none. */
export const fmtTime = (s: number | null) => (s === null ? '–' : new Date(s * 1000).toLocaleString());

/** How long ago a unix time was: `5s ago`, `3m ago`, `2h ago`, `4d ago`. */
export function fmtAgo(s: number): string {
  const d = Date.now() / 1000 - s;
  if (d < 60) return `${Math.max(0, Math.round(d))}s ago`;
  if (d < 3600) return `${Math.round(d / 60)}m ago`;
  if (d < 86400) return `${Math.round(d / 3600)}h ago`;
  return `${Math.round(d / 86400)}d ago`;
}

/** A duration in seconds: `1.23s`, `12.3s`, `4m05s`, `2h07m`; – for none. */
export function fmtDur(s: number | null): string {
  if (s === null) return '–';
  if (s < 60) return `${s.toFixed(s < 10 ? 2 : 1)}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(Math.round(s % 60)).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** A result value: numbers to 6 significant digits, the rest as JSON. */
export function fmtValue(v: unknown): string {
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(6)));
  return typeof v === 'string' ? v : JSON.stringify(v);
}
