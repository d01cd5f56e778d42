import fs from 'node:fs';

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
    fd = fs.openSync(file, 'r');
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
