import fs from 'node:fs';
import type { Readable } from 'node:stream';

/** Chunks copied at most when an attempt is cut: the rest is written after its end, by what it left behind. */
const CUT_CHUNKS = 64;
const CHUNK = 1 << 16;

/** Write all of `data` to `fd`; a segment that cannot be written (a full disk) loses it, as the task's own write would. */
function writeAll(fd: number, data: Uint8Array): void {
  try {
    for (let off = 0; off < data.length; ) off += fs.writeSync(fd, data, off);
  } catch {
    // lost, as above
  }
}

/**
 * One of a task's outputs in its slot's segment (Node's process starter): the task writes to a pipe of its own, copied
 * into the segment as it comes, and cut when the attempt ends — what the pipe still holds is copied, then it is
 * closed, so a process the task left outside its group (setsid, a daemon) that writes later gets EPIPE and its
 * bytes reach no later attempt's slice. The fork servers do the same (programs/drover_common.py, fork-server.pl).
 */
export class StreamTap {
  constructor(
    private readonly stream: Readable,
    private readonly dest: number,
  ) {
    stream.on('data', (chunk: Buffer) => writeAll(dest, chunk));
    stream.on('error', () => {});
  }

  /** The attempt has ended and its process group is gone: copy what it wrote that is still in the pipe, then close it. */
  cut(): void {
    for (let chunk: Buffer | null = this.stream.read(); chunk !== null; chunk = this.stream.read())
      writeAll(this.dest, chunk);
    // What the kernel holds and Node has not read yet: read at once, from the pipe's (non-blocking) descriptor.
    const fd = (this.stream as unknown as { _handle?: { fd?: number } })._handle?.fd;
    if (fd !== undefined && fd >= 0) {
      const buf = Buffer.allocUnsafe(CHUNK);
      for (let i = 0; i < CUT_CHUNKS; i++) {
        let n: number;
        try {
          n = fs.readSync(fd, buf, 0, CHUNK, null);
        } catch {
          break; // EAGAIN: empty
        }
        if (n === 0) break;
        writeAll(this.dest, buf.subarray(0, n));
      }
    }
    this.stream.destroy();
  }
}
