import { flattenResult } from '../../launch/result-table.js';
import { collectResults } from '../../launch/results.js';
import type { Ledger } from '../../ledger/ledger.js';
import type { ChartAnswer } from '../../protocol/dashboard.js';

/** The mean (and least, most, count) of a numeric result field for each value of a param, over the ended tasks. */
export function resultChart(ledger: Ledger, jobId: number, field: string, param: string): ChartAnswer {
  const groups = new Map<string, { n: number; sum: number; min: number; max: number }>();
  for (const t of collectResults(ledger, jobId, { states: ['succeeded'] }).tasks) {
    if (!t.result) continue;
    const v = flattenResult(t.result).get(field);
    const p = t.params[param];
    if (typeof v !== 'number' || !Number.isFinite(v) || p === undefined) continue;
    const g = groups.get(p) ?? { n: 0, sum: 0, min: v, max: v };
    g.n++;
    g.sum += v;
    g.min = Math.min(g.min, v);
    g.max = Math.max(g.max, v);
    groups.set(p, g);
  }
  const points = [...groups.entries()].map(([value, g]) => ({
    value,
    n: g.n,
    mean: g.sum / g.n,
    min: g.min,
    max: g.max,
  }));
  const numeric = points.every((p) => p.value.trim() !== '' && Number.isFinite(Number(p.value)));
  points.sort((a, b) => (numeric ? Number(a.value) - Number(b.value) : a.value < b.value ? -1 : 1));
  return { field, param, numeric, points };
}
