// The job page's charts, drawn with uPlot: attempts over time, durations, and a result field against a param.
import uPlot from 'uplot';
import type { ChartAnswer, Histogram, Timeline } from '../src/protocol/dashboard.js';
import { h } from './dom.js';
import { fmtDur } from './format.js';

/** Each state's colour (as app.css's). */
export const COLOURS: Record<string, string> = {
  pending: '#b0b7bf',
  queued: '#8aa4c8',
  running: '#2f7ed8',
  succeeded: '#2e9e5b',
  failed: '#d64541',
  killed: '#8e44ad',
  timeout: '#e67e22',
  cancelled: '#7f8c8d',
  lost: '#c0392b',
  error: '#a93226',
};

/** A titled box for a chart (marked `data-testid`), and the element the chart goes into. */
export function chartBox(title: string, testid: string): [HTMLElement, HTMLElement] {
  const body = h('div', {});
  return [h('div', { class: 'chart', 'data-testid': testid }, h('h3', {}, title), body), body];
}

/** Attempts over time into `into`: running, and ended by state, stacked. */
export function timelineChart(t: Timeline, into: HTMLElement): void {
  // Stacked: each series is the sum of itself and those below it, drawn from the top down so each fills to 0.
  const layers: [string, number[]][] = [['running', t.running], ...Object.entries(t.ended)];
  const stacked: number[][] = [];
  let acc = t.t.map(() => 0);
  for (const [, v] of layers) {
    acc = acc.map((a, i) => a + (v[i] ?? 0));
    stacked.push(acc);
  }
  const order = layers.map((_, i) => i).reverse();
  const data = [t.t, ...order.map((i) => stacked[i] as number[])] as uPlot.AlignedData;
  new uPlot(
    {
      width: 520,
      height: 220,
      series: [
        {},
        ...order.map((i) => {
          const name = layers[i]?.[0] ?? '';
          return { label: name, stroke: COLOURS[name], fill: `${COLOURS[name]}cc`, points: { show: false } };
        }),
      ],
      axes: [{}, { label: 'attempts' }],
    },
    data,
    into,
  );
}

/** The durations of ended attempts into `into`, as bars. */
export function histogramChart(hist: Histogram, into: HTMLElement): void {
  const xs = hist.counts.map((_, i) => hist.min + hist.width * (i + 0.5));
  new uPlot(
    {
      width: 420,
      height: 220,
      scales: { x: { time: false } },
      series: [
        { label: 'seconds', value: (_u, v) => (v === null ? '–' : fmtDur(v)) },
        {
          label: 'attempts',
          stroke: COLOURS.running,
          fill: `${COLOURS.running}99`,
          paths: uPlot.paths.bars?.({ size: [0.9, 60] }),
          points: { show: false },
        },
      ],
      axes: [{ label: 'duration (s)' }, {}],
    },
    [xs, hist.counts],
    into,
  );
}

/** A result field's mean, least and most against a param's values into `into` (text values evenly spaced). */
export function resultChart(chart: ChartAnswer, param: string, field: string, into: HTMLElement): void {
  const xs = chart.points.map((p, i) => (chart.numeric ? Number(p.value) : i));
  const labels = chart.points.map((p) => p.value);
  new uPlot(
    {
      width: 520,
      height: 220,
      scales: { x: { time: false } },
      series: [
        { label: param, value: (_u, v) => (chart.numeric ? String(v) : (labels[v] ?? '')) },
        { label: 'mean', stroke: COLOURS.running, width: 2 },
        { label: 'least', stroke: COLOURS.succeeded, dash: [4, 4] },
        { label: 'most', stroke: COLOURS.failed, dash: [4, 4] },
      ],
      axes: [
        {
          label: param,
          ...(chart.numeric ? {} : { values: (_u, vals) => vals.map((v) => labels[v] ?? '') }),
        },
        { label: field },
      ],
    },
    [xs, chart.points.map((p) => p.mean), chart.points.map((p) => p.min), chart.points.map((p) => p.max)],
    into,
  );
}
