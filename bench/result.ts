import { fmtMs, fmtRatio, median } from './util.js';

/** One side of a comparison: its label and timed samples (ms). */
export interface Side {
  label: string;
  samples: number[];
  median: number;
  /** CPU time (user + system, whole process tree) of each sample, ms, when measured. */
  cpu_samples?: number[];
  cpu_median?: number;
  /** What the samples measure when not milliseconds: megabytes, or a count of files. */
  unit?: Unit;
}

/** Units of a side's samples other than milliseconds. */
export type Unit = 'MB' | 'files';

/** A side's median for people, in its unit. */
export function fmtMedian(s: Side): string {
  if (s.unit === 'MB') return `${s.median.toFixed(1)} MB`;
  if (s.unit === 'files') return `${Math.round(s.median)} files`;
  return fmtMs(s.median);
}

/**
 * met / MISSED: a ratio against a target. info: a figure with no target. skipped: not run (a tool is missing).
 * FAILED: a run or a check failed, so the figure means nothing.
 */
export type Verdict = 'met' | 'MISSED' | 'info' | 'skipped' | 'FAILED';

/** One benchmark's outcome, as printed and as written to the JSON results. */
export interface Result {
  /** Stable id, e.g. `local.launch-2000.xargs`. */
  id: string;
  /** What was measured, for people. */
  title: string;
  drover?: Side;
  reference?: Side;
  /** drover's median / the reference's median. */
  ratio?: number;
  /**
   * The median of the per-repetition ratios (drover's i-th run / the reference's i-th run, measured next to each
   * other): steadier than `ratio` when the machine's load drifts during the run.
   */
  paired_ratio?: number;
  /** drover's median CPU time / the reference's (both sides' whole process trees), when measured. */
  cpu_ratio?: number;
  /** The ratio must be at most this. */
  target?: number;
  verdict: Verdict;
  /** What was checked after the runs (each one passed unless the verdict is FAILED). */
  checks: string[];
  notes: string[];
}

/** A side from its samples. */
export function side(label: string, samples: number[], cpu?: number[], unit?: Unit): Side {
  const s: Side = { label, samples, median: median(samples), ...(unit ? { unit } : {}) };
  if (cpu && cpu.length > 0 && cpu.every(Number.isFinite)) {
    s.cpu_samples = cpu;
    s.cpu_median = median(cpu);
  }
  return s;
}

/** A comparison of drover with a reference, judged against `target` when given. */
export function compare(
  id: string,
  title: string,
  d: Side,
  ref: Side,
  target: number | undefined,
  checks: string[],
  notes: string[] = [],
): Result {
  const ratio = d.median / ref.median;
  const pairs = Math.min(d.samples.length, ref.samples.length);
  const paired = median(Array.from({ length: pairs }, (_, i) => d.samples[i]! / ref.samples[i]!));
  const verdict: Verdict = target === undefined ? 'info' : ratio <= target ? 'met' : 'MISSED';
  return {
    id,
    title,
    drover: d,
    reference: ref,
    ratio,
    paired_ratio: paired,
    ...(d.cpu_median !== undefined && ref.cpu_median ? { cpu_ratio: d.cpu_median / ref.cpu_median } : {}),
    ...(target === undefined ? {} : { target }),
    verdict,
    checks,
    notes,
  };
}

/** A benchmark that could not give a figure. */
export function notRun(
  id: string,
  title: string,
  verdict: 'skipped' | 'FAILED',
  why: string,
  target?: number,
): Result {
  return { id, title, verdict, ...(target === undefined ? {} : { target }), checks: [], notes: [why] };
}

/** The one line printed when a benchmark is done. */
export function resultLine(r: Result): string {
  if (r.verdict === 'skipped' || r.verdict === 'FAILED') {
    return `${r.verdict === 'FAILED' ? 'FAILED ' : 'skipped'} ${r.title}: ${r.notes.join('; ')}`;
  }
  const d = r.drover!;
  const ref = r.reference;
  const parts = [`drover ${fmtMedian(d)}`];
  if (ref)
    parts.push(
      `${ref.label} ${fmtMedian(ref)}`,
      `ratio ${fmtRatio(r.ratio)} (paired ${fmtRatio(r.paired_ratio)})`,
    );
  if (ref && r.cpu_ratio !== undefined)
    parts.push(`cpu ${fmtMs(d.cpu_median!)} vs ${fmtMs(ref.cpu_median!)} = ${fmtRatio(r.cpu_ratio)}`);
  const judged =
    r.target === undefined
      ? '(no target)'
      : `target ≤ ${fmtRatio(r.target)}: ${r.verdict === 'met' ? 'met' : 'MISSED'}`;
  return `${r.title}: ${parts.join(' | ')} ${judged}  [n=${d.samples.length}]`;
}

function pad(cells: string[][]): string {
  const widths = cells[0]!.map((_, c) => Math.max(...cells.map((row) => row[c]!.length)));
  return cells
    .map((row) =>
      row
        .map((cell, c) => cell.padEnd(widths[c]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** The final table of every result. */
export function resultTable(results: readonly Result[]): string {
  const rows = results.map((r) => [
    r.id,
    r.drover ? fmtMedian(r.drover) : '-',
    r.reference ? `${fmtMedian(r.reference)} (${r.reference.label})` : '-',
    fmtRatio(r.ratio),
    fmtRatio(r.paired_ratio),
    fmtRatio(r.cpu_ratio),
    r.target === undefined ? '-' : `≤ ${fmtRatio(r.target)}`,
    r.verdict,
  ]);
  return pad([
    ['benchmark', 'drover', 'reference', 'ratio', 'paired', 'cpu ratio', 'target', 'verdict'],
    ...rows,
  ]);
}

/** The results as a Markdown table, for docs/benchmarks.md (`--markdown`). */
export function markdownTable(results: readonly Result[]): string {
  const rows = results.map((r) => {
    const d = r.drover ? fmtMedian(r.drover) : '-';
    const ref = r.reference ? `${fmtMedian(r.reference)} (${r.reference.label})` : '-';
    const target = r.target === undefined ? '-' : `≤ ${fmtRatio(r.target)}`;
    const cells = [
      r.id,
      d,
      ref,
      fmtRatio(r.ratio),
      fmtRatio(r.paired_ratio),
      fmtRatio(r.cpu_ratio),
      target,
      r.verdict,
    ];
    return `| ${cells.map((c) => c.replaceAll('|', '\\|')).join(' | ')} |`;
  });
  return [
    '| benchmark | drover | reference | ratio | paired | cpu ratio | target | verdict |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows,
  ].join('\n');
}
