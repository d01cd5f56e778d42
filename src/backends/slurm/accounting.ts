import { readFrom } from '../../files.js';
import { expandBlocks, parseBlocks } from '../../tasklist/tasklist.js';
import { completeLines, type Parsed, unreadable, unreadableWarning, whole } from '../cluster/answer.js';
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
 * last line of an element wins (a requeued element has several). A last line without its newline is one
 * slurmctld is still writing: it is left for the next read. A line of these arrays without its state, index
 * or exit code (torn, or two lines run together) makes the log unreadable.
 */
export function parseJobcomp(text: string, arrayIds: ReadonlySet<string>): Parsed<Map<string, ElementEnd>> {
  const ends = new Map<string, ElementEnd>();
  const lines = text.split('\n');
  lines.pop(); // empty after the last newline, or the line being written
  for (const line of lines) {
    const array = /(?:^|\s)ArrayJobId=(\d+)(?:\s|$)/.exec(line)?.[1];
    if (array === undefined || !arrayIds.has(array)) continue;
    const index = /(?:^|\s)ArrayTaskId=(\d+)(?:\s|$)/.exec(line)?.[1];
    const state = /(?:^|\s)JobState=([A-Z_]+)(?:\s|$)/.exec(line)?.[1];
    const exit = /(?:^|\s)ExitCode=(\d+:\d+)(?:\s|$)/.exec(line)?.[1];
    // Two records run together (a torn write) hold two of each key.
    const once = (key: string) => line.split(key).length === 2;
    const joined = !once('JobState=') || !once('ArrayJobId=') || !line.startsWith('JobId=');
    if (index === undefined || state === undefined || exit === undefined || joined)
      return unreadable("a line of the launch's arrays is not a whole record");
    ends.set(`${array}_${index}`, { state, ...exitParts(exit), source: 'jobcomp' });
  }
  return whole(ends);
}

/** A line of `sacct -n -P -X -o JobID,State,ExitCode`: `12_3|CANCELLED by 0|0:15`, or folded `12_[4-6]|PENDING|0:0`. */
const SACCT_LINE = /^(\d+(?:_\d+|_\[[^\]]+\])?)\|([A-Z_]+(?: by \d+)?)\|(\d+:\d+)$/;

/**
 * `sacct -n -P -X -o JobID,State,ExitCode` lines by `A_I` name (a folded `A_[4-6]` line counts for each), or
 * why the answer is not whole (cut inside a line, or a line of another shape).
 */
export function parseSacct(text: string): Parsed<Map<string, ElementEnd>> {
  const lines = completeLines(text);
  if (!lines.ok) return lines;
  const ends = new Map<string, ElementEnd>();
  for (const line of lines.value) {
    if (line.trim() === '') continue;
    const m = SACCT_LINE.exec(line.trim());
    if (!m) return unreadable('a line is not an element, its state and exit code');
    const id = m[1]!;
    const end: ElementEnd = { state: m[2]!.split(' ')[0]!, ...exitParts(m[3]), source: 'sacct' };
    const folded = /^(\d+)_\[([^\]%]+)(%\d+)?\]$/.exec(id);
    if (folded) {
      let indices: number[];
      try {
        indices = expandBlocks(parseBlocks(folded[2]!));
      } catch {
        return unreadable('a folded line lists no indices it can read');
      }
      for (const i of indices) ends.set(`${folded[1]}_${i}`, end);
    } else if (id.includes('_')) ends.set(id, end);
  }
  return whole(ends);
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

/** The accounting source's answer about gone elements: one sacct call or a read of the job completion log. */
function accountingEnds(
  accounting: Accounting,
  launch: { created_at: number },
  arrayIds: ReadonlySet<string>,
): { ends: Parsed<Map<string, ElementEnd>>; source: string } | undefined {
  if (arrayIds.size === 0) return undefined;
  if (accounting.kind === 'jobcomp') {
    // A file smaller than the offset was rotated: read it all.
    const { offset } = accounting;
    const text = readFrom(accounting.file, (size) => (size < offset ? 0 : offset))?.buf.toString('utf8');
    return { ends: parseJobcomp(text ?? '', arrayIds), source: 'the job completion log' };
  }
  if (accounting.kind !== 'sacct') return undefined;
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
  return r.status === 0 ? { ends: parseSacct(r.stdout), source: 'sacct' } : undefined;
}

/**
 * How the given elements ended or are being stopped: for those gone from squeue, from the launch's accounting
 * source (one sacct call, or a read of the job completion log since the launch); for all, from what slurmstepd
 * wrote into the element's output file when it stopped it (it writes that before it signals the element, so it
 * is there as soon as the runner's records are). Elements no source knows are left out. An accounting answer
 * that cannot be read whole counts as none (as when sacct cannot be reached), and `warn` is told once.
 */
export function elementEnds(
  accounting: Accounting,
  launch: { dir: string; created_at: number },
  gone: readonly Element[],
  live: readonly Element[] = [],
  warn?: (message: string) => void,
): Map<string, ElementEnd> {
  const answer = accountingEnds(accounting, launch, new Set(gone.map((e) => e.arrayId)));
  let ends = new Map<string, ElementEnd>();
  if (answer?.ends.ok) ends = answer.ends.value;
  else if (answer && !answer.ends.ok)
    warn?.(
      unreadableWarning(
        answer.source,
        answer.ends.why,
        "drover judges the launch's ended elements from their output files alone",
      ),
    );
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
