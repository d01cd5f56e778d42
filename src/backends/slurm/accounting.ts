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
 * or exit code (torn, or two lines run together) makes the log unreadable. `lineAt`, when given, learns the
 * byte offset (from the start of `text`) of each element's winning line.
 */
export function parseJobcomp(
  text: string,
  arrayIds: ReadonlySet<string>,
  lineAt?: Map<string, number>,
): Parsed<Map<string, ElementEnd>> {
  const ends = new Map<string, ElementEnd>();
  const lines = text.split('\n');
  lines.pop(); // empty after the last newline, or the line being written
  let at = 0;
  for (const line of lines) {
    const here = at;
    if (lineAt) at += Buffer.byteLength(line) + 1;
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
    lineAt?.set(`${array}_${index}`, here);
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
      : /DUE TO JOB REQUEUE/.test(tail.slice(tail.lastIndexOf('*** JOB ')))
        ? 'REQUEUED'
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

/** One launch's elements whose ends reconciliation needs: those gone from squeue, and those still in it. */
export interface EndsQuery {
  accounting: Accounting;
  launch: { dir: string; created_at: number };
  gone: readonly Element[];
  live: readonly Element[];
}

/** An accounting answer for some launches' gone elements, or why it is not whole; undefined: no source. */
type AccountingAnswer = { ends: Parsed<Map<string, ElementEnd>>; source: string } | undefined;

/**
 * One sacct call for the gone elements of every launch that reads sacct: from a minute before the oldest of
 * them was made (a later launch's array ids are newer than that, and the newest record of an id comes last).
 */
function sacctEnds(queries: readonly EndsQuery[]): AccountingAnswer {
  const arrayIds = new Set(queries.flatMap((q) => q.gone.map((e) => e.arrayId)));
  if (arrayIds.size === 0) return undefined;
  const since = Math.min(...queries.map((q) => q.launch.created_at));
  const r = slurmSync('sacct', [
    '-n',
    '-P',
    '-X',
    '-S',
    sacctTime(since - 60),
    '-j',
    [...arrayIds].join(','),
    '-o',
    'JobID,State,ExitCode',
  ]);
  return r.status === 0 ? { ends: parseSacct(r.stdout), source: 'sacct' } : undefined;
}

/**
 * One read of a job completion log for the gone elements of every launch that reads it. Each launch counts
 * only lines written since it was submitted (from its offset; all of a file smaller than that, which was
 * rotated), exactly as if it had read the log alone: an older job that had the same id is not its element.
 */
function jobcompEnds(file: string, queries: readonly EndsQuery[]): AccountingAnswer[] {
  const arrayIds = new Set(queries.flatMap((q) => q.gone.map((e) => e.arrayId)));
  if (arrayIds.size === 0) return queries.map(() => undefined);
  // Where each launch starts reading: its offset, or 0 in a file smaller than that (rotated since).
  let from = queries.map(() => 0);
  const read = readFrom(file, (size) => {
    from = queries.map((q) =>
      q.accounting.kind === 'jobcomp' && size >= q.accounting.offset ? q.accounting.offset : 0,
    );
    return Math.min(...from);
  });
  const lineAt = new Map<string, number>();
  const parsed = parseJobcomp(read?.buf.toString('utf8') ?? '', arrayIds, lineAt);
  const source = 'the job completion log';
  if (!parsed.ok) return queries.map(() => ({ ends: parsed, source }));
  return queries.map((_, i) => {
    const own = new Map<string, ElementEnd>();
    for (const [name, end] of parsed.value)
      if ((read?.start ?? 0) + lineAt.get(name)! >= from[i]!) own.set(name, end);
    return { ends: whole(own), source };
  });
}

/** Each query's accounting answer: one sacct call for all that use sacct, one read per job completion log. */
function accountingAnswers(queries: readonly EndsQuery[]): AccountingAnswer[] {
  const answers: AccountingAnswer[] = queries.map(() => undefined);
  const sacct = queries.flatMap((q, i) => (q.accounting.kind === 'sacct' ? [i] : []));
  if (sacct.length > 0) {
    const answer = sacctEnds(sacct.map((i) => queries[i]!));
    for (const i of sacct) answers[i] = answer;
  }
  const logs = new Map<string, number[]>();
  queries.forEach((q, i) => {
    if (q.accounting.kind !== 'jobcomp') return;
    const list = logs.get(q.accounting.file);
    if (list) list.push(i);
    else logs.set(q.accounting.file, [i]);
  });
  for (const [file, idx] of logs) {
    const each = jobcompEnds(
      file,
      idx.map((i) => queries[i]!),
    );
    idx.forEach((i, k) => {
      answers[i] = each[k];
    });
  }
  return answers;
}

/**
 * How the given elements of some launches ended or are being stopped, one map per query: for those gone from
 * squeue, from each launch's accounting source (one sacct call for every launch that uses sacct, one read of
 * a job completion log for every launch that uses it); for all, from what slurmstepd wrote into the element's
 * output file when it stopped it (it writes that before it signals the element, so it is there as soon as the
 * runner's records are). Elements no source knows are left out. An accounting answer that cannot be read whole
 * counts as none (as when sacct cannot be reached), and `warn` is told once.
 */
export function elementEnds(
  queries: readonly EndsQuery[],
  warn?: (message: string) => void,
): Map<string, ElementEnd>[] {
  const answers = accountingAnswers(queries);
  return queries.map((q, i) => {
    const answer = answers[i];
    if (answer && !answer.ends.ok)
      warn?.(
        unreadableWarning(
          answer.source,
          answer.ends.why,
          "drover judges the launch's ended elements from their output files alone",
        ),
      );
    const accounted = answer?.ends.ok ? answer.ends.value : undefined;
    const ends = new Map<string, ElementEnd>();
    for (const e of [...q.gone, ...q.live]) {
      const name = elementName(e);
      const known = accounted?.get(name);
      if (known) ends.set(name, known);
      // Accounting may say only FAILED or CANCELLED where slurmstepd wrote the reason into the output.
      if (known && known.state !== 'CANCELLED' && known.state !== 'FAILED') continue;
      const tail = fileTail(elementOutFile(q.launch.dir, e));
      const fromOutput = tail === undefined ? undefined : parseElementOutput(tail);
      if (fromOutput && (!known || fromOutput.state !== 'CANCELLED')) ends.set(name, fromOutput);
    }
    return ends;
  });
}
