import { expandBlocks, parseBlocks } from '../../tasklist/tasklist.js';
import { completeLines, type Parsed, unreadable, unreadableWarning, whole } from '../cluster/answer.js';
import { type SlurmRun, slurmAsync, slurmSync } from './commands.js';

/** An array element Slurm still has in its queue (pending, running, completing, ...). */
export interface LiveElement {
  /** squeue's compact state: PD, R, CG, CF, S, ... */
  state: string;
  /** Why it pends (Priority, Resources, JobArrayTaskLimit, PartitionConfig, ...). */
  reason: string;
}

/** A line of `squeue -o '%i %t %r'`: job id, compact state (1 to 3 capitals), the reason (may hold spaces). */
const LINE = /^(\d+(?:_\d+|_\[[^\]\s]+\])?) ([A-Z]{1,3})(?: (.*))?$/;

/**
 * Parse `squeue -h -r -o '%i %t %r'` into live elements by `A_I` name, or say the answer is not whole: cut
 * inside a line, or with a line of another shape. A line still folded into `A_[5-20%4]` (squeue without -r) is
 * expanded; lines of jobs that are not arrays are left out.
 */
export function parseSqueue(text: string): Parsed<Map<string, LiveElement>> {
  const lines = completeLines(text);
  if (!lines.ok) return lines;
  const live = new Map<string, LiveElement>();
  for (const line of lines.value) {
    if (line.trim() === '') continue;
    const m = LINE.exec(line.trim());
    if (!m) return unreadable('a line is not an element, its state and reason');
    const id = m[1]!;
    const state = m[2]!;
    const reason = m[3] ?? '';
    const folded = /^(\d+)_\[([^\]%]+)(%\d+)?\]$/.exec(id);
    if (folded) {
      let indices: number[];
      try {
        indices = expandBlocks(parseBlocks(folded[2]!));
      } catch {
        return unreadable('a folded line lists no indices it can read');
      }
      for (const i of indices) live.set(`${folded[1]}_${i}`, { state, reason });
    } else if (id.includes('_')) {
      live.set(id, { state, reason });
    }
  }
  return whole(live);
}

/**
 * The live elements of some arrays: one `squeue -r` for all of them. Undefined when squeue failed (the
 * controller is down or busy) or its answer could not be read whole (then `warn` is told, once per command):
 * nobody can say which elements are gone, and nothing should be judged lost.
 */
export function liveElements(
  arrayIds: readonly string[],
  warn?: (message: string) => void,
): Map<string, LiveElement> | undefined {
  return liveOf(slurmSync('squeue', squeueArgs(arrayIds)), warn);
}

/** liveElements, without holding the caller's thread while squeue runs (the controller). */
export async function liveElementsAsync(
  arrayIds: readonly string[],
  warn?: (message: string) => void,
): Promise<Map<string, LiveElement> | undefined> {
  return liveOf(await slurmAsync('squeue', squeueArgs(arrayIds)), warn);
}

function squeueArgs(arrayIds: readonly string[]): string[] {
  return ['-h', '-r', '-j', arrayIds.join(','), '-o', '%i %t %r'];
}

function liveOf(r: SlurmRun, warn?: (message: string) => void): Map<string, LiveElement> | undefined {
  if (r.status === 0) {
    const parsed = parseSqueue(r.stdout);
    if (parsed.ok) return parsed.value;
    warn?.(
      unreadableWarning(
        'squeue',
        parsed.why,
        'task states stay as their runners recorded them until it does',
      ),
    );
    return undefined;
  }
  // squeue -j with a single id Slurm has forgotten exits 1 with this message: nothing of it is live.
  if (/invalid job id/i.test(r.stderr)) return new Map();
  return undefined;
}
