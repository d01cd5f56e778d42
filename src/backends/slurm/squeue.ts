import { expandBlocks, parseBlocks } from '../../tasklist/tasklist.js';
import { slurmSync } from './commands.js';

/** An array element Slurm still has in its queue (pending, running, completing, ...). */
export interface LiveElement {
  /** squeue's compact state: PD, R, CG, CF, S, ... */
  state: string;
  /** Why it pends (Priority, Resources, JobArrayTaskLimit, PartitionConfig, ...). */
  reason: string;
}

/**
 * Parse `squeue -h -r -o '%i %t %r'` lines into live elements by `A_I` name. A line still folded into
 * `A_[5-20%4]` (squeue without -r) is expanded; lines of jobs that are not arrays are left out.
 */
export function parseSqueue(text: string): Map<string, LiveElement> {
  const live = new Map<string, LiveElement>();
  for (const line of text.split('\n')) {
    const [id, state = '', ...rest] = line.trim().split(/\s+/);
    if (!id) continue;
    const reason = rest.join(' ');
    const folded = /^(\d+)_\[([^\]%]+)(%\d+)?\]$/.exec(id);
    if (folded) {
      try {
        for (const i of expandBlocks(parseBlocks(folded[2]!)))
          live.set(`${folded[1]}_${i}`, { state, reason });
      } catch {
        // not a list we can read: leave it out
      }
    } else if (/^\d+_\d+$/.test(id)) {
      live.set(id, { state, reason });
    }
  }
  return live;
}

/**
 * The live elements of some arrays: one `squeue -r` for all of them. Undefined when squeue failed (the
 * controller is down or busy): then nobody can say which elements are gone, and nothing should be judged lost.
 */
export function liveElements(arrayIds: readonly string[]): Map<string, LiveElement> | undefined {
  const r = slurmSync('squeue', ['-h', '-r', '-j', arrayIds.join(','), '-o', '%i %t %r']);
  if (r.status === 0) return parseSqueue(r.stdout);
  // squeue -j with a single id Slurm has forgotten exits 1 with this message: nothing of it is live.
  if (/invalid job id/i.test(r.stderr)) return new Map();
  return undefined;
}
