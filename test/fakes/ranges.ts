/**
 * Index ranges as the schedulers write them, parsed and printed by the FAKE schedulers themselves (not with
 * drover's tasklist code: a fake that shared drover's parser would share its mistakes).
 */

/** Indices of `first[-last[:step]]`, or undefined when the text is not one. */
export function parseRange(text: string): number[] | undefined {
  const m = /^(\d+)(?:-(\d+)(?::(\d+))?)?$/.exec(text);
  if (!m) return undefined;
  const first = Number(m[1]);
  const last = m[2] === undefined ? first : Number(m[2]);
  const step = m[3] === undefined ? 1 : Number(m[3]);
  if (last < first || step < 1) return undefined;
  const out: number[] = [];
  for (let i = first; i <= last; i += step) out.push(i);
  return out;
}

/** Indices of a comma-separated list of ranges (`1-3,5,8-12:2`), sorted and unique; undefined if malformed. */
export function parseRangeList(text: string): number[] | undefined {
  const all = new Set<number>();
  for (const item of text.split(',')) {
    const r = parseRange(item);
    if (!r) return undefined;
    for (const i of r) all.add(i);
  }
  return [...all].sort((a, b) => a - b);
}

/** Runs of consecutive indices, as [first, last] pairs. */
export function runs(indices: readonly number[]): [number, number][] {
  const sorted = [...new Set(indices)].sort((a, b) => a - b);
  const out: [number, number][] = [];
  for (const i of sorted) {
    const last = out[out.length - 1];
    if (last && last[1] + 1 === i) last[1] = i;
    else out.push([i, i]);
  }
  return out;
}

/** Slurm's folded form of indices (`1-3,5`), as squeue prints `A_[1-3,5]`. */
export function slurmList(indices: readonly number[]): string {
  return runs(indices)
    .map(([a, b]) => (a === b ? `${a}` : `${a}-${b}`))
    .join(',');
}

/** Grid Engine's form of pending task ids in qstat (`5`, `9,10`, `5-20:1`). */
export function gridEngineList(indices: readonly number[]): string {
  return runs(indices)
    .map(([a, b]) => (a === b ? `${a}` : b === a + 1 ? `${a},${b}` : `${a}-${b}:1`))
    .join(',');
}
