import fs from 'node:fs';
import path from 'node:path';
import { openTaskFile } from '../util/task-file.js';

/**
 * Where an attempt's output is, and how to read it (issue 14 §3). An attempt writes its stdout and stderr either
 * to its own two files (`--logs files`: `<logDir>/<task>.<attempt>.out`, `.err`) or, by default, to the
 * segments of the runner slot it ran in (`--logs segments`): `<prefix>.<slot>.out` and `.err`, opened once per
 * slot with O_APPEND. A slot runs one task at a time, and its spawner notes each segment's size just before a
 * task starts and just after it is reaped (when what it left in its process group has been killed), so the
 * bytes of an attempt are one range of each segment, never mixed with another task's. Its start record holds
 * where they begin (`out_off`, `err_off`) and its end record where they end (`out_end`, `err_end`).
 *
 * A reader of a running attempt does not know its end yet, and by the time the end record is written the next
 * task of the slot may have written bytes after it. So the spawner also writes each attempt's ends into the
 * slot's index (`<prefix>.<slot>.idx`, fixed-size entries in order, the attempt's `seq`-th) right after the reap
 * and before the slot's next task starts. A reader takes the segment's size, then looks for the entry: if it is
 * there, that is the end; if not, the attempt had not been reaped when the size was taken, so no later task had
 * written yet, and the size is a safe end for now. (One gap: an index entry that the disk had no room for. The end
 * record still has the ends, but until it is read in, a reader of that attempt may see the next task's bytes.)
 */

export type Stream = 'out' | 'err' | 'idx';

/**
 * A file of one attempt in the log folder: its own log (`--logs files`, `<task>.<attempt>.out|err`) or, whatever
 * the logs, its result (`<task>.<attempt>.result.json`, DROVER_RESULT_FILE).
 */
export function attemptFile(
  logDir: string,
  task: number,
  attempt: number,
  kind: 'out' | 'err' | 'result',
): string {
  return path.join(logDir, `${task}.${attempt}.${kind === 'result' ? 'result.json' : kind}`);
}

/** What a start record says of an attempt's output in segments: its slot's two segments, where it begins, its entry. */
export function segmentLogs(
  prefix: string,
  slot: number,
  at: { outOff: number; errOff: number; seq: number },
): { out: string; err: string; out_off: number; err_off: number; seq: number } {
  return {
    out: segmentFile(prefix, slot, 'out'),
    err: segmentFile(prefix, slot, 'err'),
    out_off: at.outOff,
    err_off: at.errOff,
    seq: at.seq,
  };
}

/** The file of a slot's segment (or index): `<prefix>.<slot>.<stream>`; the spawners build the same name. */
export function segmentFile(prefix: string, slot: number, stream: Stream): string {
  return `${prefix}.${slot}.${stream}`;
}

/** The index beside a segment (`….3.out` → `….3.idx`). */
export function indexOf(segment: string): string {
  return segment.replace(/\.(out|err)$/, '.idx');
}

/** Bytes of one index entry: `%015d %015d\n`, the ends of stdout and stderr. */
export const INDEX_ENTRY = 32;

/** An attempt's stdout or stderr as the ledger holds it. */
export interface LogPlace {
  /** The file: its own log, or its slot's segment; null when none was recorded. */
  path: string | null;
  /** Where it begins in a segment; null for a file of its own (all of it). */
  off: number | null;
  /** Where it ends (exclusive), once known; null while it runs (or when its end record was lost). */
  end: number | null;
  /** Its entry in the segment's index (a segment only). */
  seq: number | null;
}

/** A slice known to hold nothing: it needs no file (its segment may never have been made). */
export function isEmptySlice(place: LogPlace): boolean {
  return place.off !== null && place.end !== null && place.end <= place.off;
}

/** How far an attempt's output goes now. */
export interface Extent {
  start: number;
  /** Bytes up to here are the attempt's (exclusive). */
  end: number;
  /** The end is the attempt's last: it has ended and nothing more is to come. */
  final: boolean;
}

/**
 * How far the output of `place` goes now, from an open descriptor of its file. For a segment, the size is taken
 * before the index is read (see above): that order is what keeps a later task's bytes out.
 */
export function extentOf(fd: number, place: LogPlace, stream: 'out' | 'err'): Extent {
  if (place.off === null) return { start: 0, end: fs.fstatSync(fd).size, final: false };
  const start = place.off;
  if (place.end !== null) return { start, end: Math.max(start, place.end), final: true };
  const size = fs.fstatSync(fd).size;
  const entry = place.seq !== null && place.path !== null ? indexEntry(place.path, place.seq) : null;
  if (entry) {
    const end = stream === 'out' ? entry.out : entry.err;
    return { start, end: Math.max(start, end), final: true };
  }
  return { start, end: Math.max(start, size), final: false };
}

/** The `seq`-th entry of the index beside `segment`, or null when it is not written (yet). */
export function indexEntry(segment: string, seq: number): { out: number; err: number } | null {
  // A number no index reaches (a hostile or damaged record) has no entry.
  if (!Number.isSafeInteger(seq * INDEX_ENTRY) || seq < 0) return null;
  let fd: number;
  try {
    fd = openTaskFile(indexOf(segment));
  } catch {
    return null;
  }
  try {
    const buf = Buffer.alloc(INDEX_ENTRY);
    const n = fs.readSync(fd, buf, 0, INDEX_ENTRY, seq * INDEX_ENTRY);
    if (n < INDEX_ENTRY) return null;
    const m = /^(\d{15}) (\d{15})\n$/.exec(buf.toString('latin1'));
    return m ? { out: Number(m[1]), err: Number(m[2]) } : null;
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * The bytes an attempt's output holds now (size only, nothing read): for a finished attempt of either kind what
 * it wrote, for a running one what it has written so far. 0 when the file is not there.
 */
export function outputSize(place: LogPlace): number {
  if (place.path === null) return 0;
  if (place.off !== null && place.end !== null) return Math.max(0, place.end - place.off);
  if (place.off === null) return fs.statSync(place.path, { throwIfNoEntry: false })?.size ?? 0; // stat only: never blocks
  let fd: number;
  try {
    fd = openTaskFile(place.path);
  } catch {
    return 0;
  }
  try {
    const e = extentOf(fd, place, 'out');
    return e.end - e.start;
  } finally {
    fs.closeSync(fd);
  }
}

/** The place of an attempt's stdout or stderr from its attempt row's columns. */
export function placeOf(
  row: {
    stdout_path: string | null;
    stderr_path: string | null;
    stdout_off?: number | null;
    stdout_end?: number | null;
    stderr_off?: number | null;
    stderr_end?: number | null;
    log_seq?: number | null;
  },
  stream: 'out' | 'err',
): LogPlace {
  return stream === 'out'
    ? {
        path: row.stdout_path,
        off: row.stdout_off ?? null,
        end: row.stdout_end ?? null,
        seq: row.log_seq ?? null,
      }
    : {
        path: row.stderr_path,
        off: row.stderr_off ?? null,
        end: row.stderr_end ?? null,
        seq: row.log_seq ?? null,
      };
}

/** Read bytes [from, to) of an open file (fewer when it is shorter). */
export function readRange(fd: number, from: number, to: number): Buffer {
  const want = Math.max(0, to - from);
  const buf = Buffer.alloc(want);
  let got = 0;
  while (got < want) {
    const n = fs.readSync(fd, buf, got, want - got, from + got);
    if (n === 0) break;
    got += n;
  }
  return buf.subarray(0, got);
}
