import fs from 'node:fs';

/**
 * Opening a file a task controls (its result file, its logs): the task may have made it a FIFO, a socket, a
 * device (`/dev/zero`), a directory or a symlink loop. It is opened with O_NONBLOCK, so a FIFO never blocks the
 * open or a read, and refused after fstat unless it is a regular file, so every read of it is bounded.
 */

/** The error for a task file that is not a regular file (code ENOTREG, the path named). */
export class NotRegularFile extends Error {
  readonly code = 'ENOTREG';
  constructor(
    readonly path: string,
    readonly kind: string,
  ) {
    super(`${path} is a ${kind}, not a regular file`);
  }
}

function kindOf(st: fs.Stats): string {
  if (st.isFIFO()) return 'FIFO';
  if (st.isSocket()) return 'socket';
  if (st.isCharacterDevice()) return 'character device';
  if (st.isBlockDevice()) return 'block device';
  if (st.isDirectory()) return 'directory';
  return 'special file';
}

/** Open a task-controlled file for reading without blocking; throws NotRegularFile unless it is a regular file. */
export function openTaskFile(file: string): number {
  const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw new NotRegularFile(file, kindOf(st));
    return fd;
  } catch (err) {
    fs.closeSync(fd);
    throw err;
  }
}

/** The same as openTaskFile, for async readers (a FileHandle). */
export async function openTaskFileHandle(file: string): Promise<fs.promises.FileHandle> {
  const handle = await fs.promises.open(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  try {
    const st = await handle.stat();
    if (!st.isFile()) throw new NotRegularFile(file, kindOf(st));
    return handle;
  } catch (err) {
    await handle.close();
    throw err;
  }
}

/**
 * A task-controlled regular file's whole text, or 'too-big' with its size when it holds more than `cap` bytes
 * (nothing is read then). Memory stays under `cap` whatever the file (a sparse or growing file included).
 */
export function readTaskFile(file: string, cap: number): { text: string } | { tooBig: number } {
  const fd = openTaskFile(file);
  try {
    const size = fs.fstatSync(fd).size;
    if (size > cap) return { tooBig: size };
    const buf = Buffer.alloc(cap + 1);
    let got = 0;
    while (got < buf.length) {
      const n = fs.readSync(fd, buf, got, buf.length - got, got);
      if (n === 0) break;
      got += n;
    }
    if (got > cap) return { tooBig: got };
    return { text: buf.subarray(0, got).toString('utf8') };
  } finally {
    fs.closeSync(fd);
  }
}
