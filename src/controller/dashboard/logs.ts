import fs from 'node:fs';

/** How much of a log's end the task page shows. */
export const TAIL_BYTES = 16 * 1024;

/** The end of a log file as the task page shows it. */
export interface LogTail {
  path: string | null;
  /** Bytes in the file now; null when it is not there (never written, removed, or on a node's own disk). */
  size: number | null;
  /** Its last TAIL_BYTES at most, as text (a character cut at the start shows as U+FFFD). */
  text: string;
  /** True when the file holds more than the text shows. */
  cut: boolean;
}

/** The tail of a log file: a stat and one read of at most TAIL_BYTES, whatever the file's size. */
export function logTail(file: string | null, bytes = TAIL_BYTES): LogTail {
  if (file === null) return { path: null, size: null, text: '', cut: false };
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return { path: file, size: null, text: '', cut: false };
  }
  try {
    const size = fs.fstatSync(fd).size;
    const want = Math.min(size, bytes);
    const buf = Buffer.alloc(want);
    let got = 0;
    while (got < want) {
      const n = fs.readSync(fd, buf, got, want - got, size - want + got);
      if (n === 0) break;
      got += n;
    }
    return { path: file, size, text: buf.subarray(0, got).toString('utf8'), cut: size > want };
  } finally {
    fs.closeSync(fd);
  }
}
