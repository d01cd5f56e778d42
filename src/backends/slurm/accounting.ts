import { readFrom } from '../../files.js';
import { expandBlocks, parseBlocks } from '../../tasklist/tasklist.js';
import type { Accounting } from './cluster-config.js';
import { slurmSync } from './commands.js';
import { type Element, elementName, elementOutFile } from './handles.js';

/** How an array element ended, as far as Slurm (or the element's output file) says. */
export interface ElementEnd {
  /** Slurm's JobState: COMPLETED, FAILED, TIMEOUT, CANCELLED, OUT_OF_MEMORY, NODE_FAIL, PREEMPTED, ... */
  state: string;
  /** Exit code of the batch script, when it exited. */
  exitCode?: number;
  /** The signal that ended the batch script, when one did. */
  signal?: number;
  source: 'sacct' | 'jobcomp' | 'output';
}

/** `3:0` → exit 3; `0:9` → signal 9. */
function exitParts(text: string | undefined): Pick<ElementEnd, 'exitCode' | 'signal'> {
  const m = /^(\d+):(\d+)$/.exec(text ?? '');
  if (!m) return {};
  const signal = Number(m[2]);
  return signal > 0 ? { signal } : { exitCode: Number(m[1]) };
}

/**
 * Lines of the job completion log (jobcomp/filetxt) for elements of the given arrays, by `A_I` name; the
 * last line of an element wins (a requeued element has several).
 */
export function parseJobcomp(text: string, arrayIds: ReadonlySet<string>): Map<string, ElementEnd> {
  const ends = new Map<string, ElementEnd>();
  for (const line of text.split('\n')) {
    const array = /(?:^|\s)ArrayJobId=(\d+)(?:\s|$)/.exec(line)?.[1];
    if (array === undefined || !arrayIds.has(array)) continue;
    const index = /(?:^|\s)ArrayTaskId=(\d+)(?:\s|$)/.exec(line)?.[1];
    const state = /(?:^|\s)JobState=(\S+)/.exec(line)?.[1];
    if (index === undefined || state === undefined) continue;
    const exit = /(?:^|\s)ExitCode=(\S+)/.exec(line)?.[1];
    ends.set(`${array}_${index}`, { state, ...exitParts(exit), source: 'jobcomp' });
  }
  return ends;
}

/** `sacct -n -P -X -o JobID,State,ExitCode` lines by `A_I` name (a folded `A_[4-6]` line counts for each). */
export function parseSacct(text: string): Map<string, ElementEnd> {
  const ends = new Map<string, ElementEnd>();
  for (const line of text.split('\n')) {
    const [id, stateText, exit] = line.trim().split('|');
    if (!id || !stateText) continue;
    const state = stateText.split(' ')[0]!;
    const end: ElementEnd = { state, ...exitParts(exit), source: 'sacct' };
    const single = /^(\d+)_(\d+)$/.exec(id);
    const folded = /^(\d+)_\[([^\]%]+)(%\d+)?\]$/.exec(id);
    if (single) ends.set(id, end);
    else if (folded) {
      try {
        for (const i of expandBlocks(parseBlocks(folded[2]!))) ends.set(`${folded[1]}_${i}`, end);
      } catch {
        // not a list we can read
      }
    }
  }
  return ends;
}

/** What slurmstepd wrote into an element's output when it stopped it; undefined when it wrote nothing. */
export function parseElementOutput(tail: string): ElementEnd | undefined {
  const state = /CANCELLED AT \S+ DUE TO TIME LIMIT/.test(tail)
    ? 'TIMEOUT'
    : /DUE TO PREEMPTION/.test(tail)
      ? 'PREEMPTED'
      : /DUE TO NODE FAILURE/.test(tail)
        ? 'NODE_FAIL'
        : /oom[-_ ]kill|Exceeded job memory limit/i.test(tail)
          ? 'OUT_OF_MEMORY'
          : /\*\*\* JOB \d+ ON \S+ CANCELLED AT/.test(tail)
            ? 'CANCELLED'
            : undefined;
  return state ? { state, source: 'output' } : undefined;
}

/** The last `bytes` of a file, or undefined when it does not exist. */
export function fileTail(file: string, bytes = 8192): string | undefined {
  return readFrom(file, (size) => size - bytes)?.buf.toString('utf8');
}

/** Slurm's time format for sacct --starttime (local time), from unix seconds. */
function sacctTime(unix: number): string {
  const d = new Date(unix * 1000);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/**
 * How the given elements ended or are being stopped: for those gone from squeue, from the launch's accounting
 * source (one sacct call, or a read of the job completion log since the launch); for all, from what slurmstepd
 * wrote into the element's output file when it stopped it (it writes that before it signals the element, so it
 * is there as soon as the runner's records are). Elements no source knows are left out.
 */
export function elementEnds(
  accounting: Accounting,
  launch: { dir: string; created_at: number },
  gone: readonly Element[],
  live: readonly Element[] = [],
): Map<string, ElementEnd> {
  const arrayIds = new Set(gone.map((e) => e.arrayId));
  let ends = new Map<string, ElementEnd>();
  if (arrayIds.size > 0 && accounting.kind === 'jobcomp') {
    // A file smaller than the offset was rotated: read it all.
    const { offset } = accounting;
    const text = readFrom(accounting.file, (size) => (size < offset ? 0 : offset))?.buf.toString('utf8');
    ends = parseJobcomp(text ?? '', arrayIds);
  } else if (arrayIds.size > 0 && accounting.kind === 'sacct') {
    const r = slurmSync('sacct', [
      '-n',
      '-P',
      '-X',
      '-S',
      sacctTime(launch.created_at - 60),
      '-j',
      [...arrayIds].join(','),
      '-o',
      'JobID,State,ExitCode',
    ]);
    if (r.status === 0) ends = parseSacct(r.stdout);
  }
  for (const e of [...gone, ...live]) {
    const name = elementName(e);
    const known = ends.get(name);
    // Accounting may say only FAILED or CANCELLED where slurmstepd wrote the reason into the output.
    if (known && known.state !== 'CANCELLED' && known.state !== 'FAILED') continue;
    const tail = fileTail(elementOutFile(launch.dir, e));
    const fromOutput = tail === undefined ? undefined : parseElementOutput(tail);
    if (fromOutput && (!known || fromOutput.state !== 'CANCELLED')) ends.set(name, fromOutput);
  }
  return ends;
}
