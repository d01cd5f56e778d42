import fs from 'node:fs';
import { isSystemError } from './errors.js';
import { openTaskFile } from './util/task-file.js';

/**
 * The bytes of a file from the position `start(size)` picks to its end, and that position; undefined when the
 * file does not exist. Record ingestion reads past an offset with it, reconciliation the tail of an output.
 */
export function readFrom(
  file: string,
  start: (size: number) => number,
): { buf: Buffer; start: number } | undefined {
  let fd: number;
  try {
    fd = openTaskFile(file); // a task's output may be a FIFO or a device: not read then
  } catch {
    return undefined;
  }
  try {
    const size = fs.fstatSync(fd).size;
    const from = Math.min(size, Math.max(0, start(size)));
    const buf = Buffer.allocUnsafe(size - from);
    const n = fs.readSync(fd, buf, 0, buf.length, from);
    return { buf: buf.subarray(0, n), start: from };
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Run `fn`, which works on `file`, so that a failed system call it makes names `file`: Node's errors name the
 * path of calls that take one, not of writes to an open file (`ENOSPC: no space left on device, write`).
 */
export function atPath<T>(file: string, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (isSystemError(err) && err.path === undefined) err.path = file;
    throw err;
  }
}

/** Count the line ends (`\n`) in the first `end` bytes of a file: the number of the line that starts there. */
export function linesBefore(file: string, end: number): number {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return 0;
  }
  try {
    const buf = Buffer.allocUnsafe(1 << 20);
    let n = 0;
    for (let pos = 0; pos < end; ) {
      const got = fs.readSync(fd, buf, 0, Math.min(buf.length, end - pos), pos);
      if (got === 0) break;
      for (let i = buf.indexOf(0x0a); i >= 0 && i < got; i = buf.indexOf(0x0a, i + 1)) n++;
      pos += got;
    }
    return n;
  } finally {
    fs.closeSync(fd);
  }
}

/** Write a file atomically: temp file in the same folder, then rename. A failure leaves nothing, and names `file`. */
export function writeFileAtomic(file: string, text: string): void {
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  try {
    fs.writeFileSync(tmp, text);
    fs.renameSync(tmp, file);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    if (isSystemError(err)) err.path = file;
    throw err;
  }
}
