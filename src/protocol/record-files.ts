/**
 * The names of a launch's record files: `<runner>.jsonl`, the runner named `g<group>.<host>.<pid>`. The runner of
 * an array element the scheduler ran again (preemption, requeue) is `g<group>.r<k>.<host>.<pid>`, k counting the
 * element's runs after its first. Ingest reads a launch's files in the order of k, so what the runners before
 * recorded of an attempt is in the ledger before the next runner's word on it (a PreemptedRecord).
 */

/** A runner's name: its group, its run of the element (0: the first), its host and pid. */
export function runnerName(group: string, run: number, host: string, pid: number): string {
  return run > 0 ? `g${group}.r${run}.${host}.${pid}` : `g${group}.${host}.${pid}`;
}

/** Which run of its element wrote a record file (0: the first, or a file not named by runnerName). */
export function runOfFile(name: string): number {
  const m = /^g[^.]*\.r([0-9]{1,9})\./.exec(name);
  return m ? Number(m[1]) : 0;
}

/** The record files of runners of `group` among a folder's names (its own runs, before and after). */
export function isGroupFile(name: string, group: string): boolean {
  return name.startsWith(`g${group}.`) && name.endsWith('.jsonl');
}

/** Record file names in the order ingest reads them: by run, otherwise as given (a stable sort). */
export function inRunOrder(names: readonly string[]): string[] {
  if (!names.some((n) => runOfFile(n) > 0)) return [...names];
  return names
    .map((n, i) => ({ n, i, run: runOfFile(n) }))
    .sort((a, b) => a.run - b.run || a.i - b.i)
    .map((x) => x.n);
}
