import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { isSystemError } from '../errors.js';

/** Bytes gathered before they are written: a few writes for a file of any size, and bounded memory. */
const CHUNK_BYTES = 1 << 20;

/** Room for the text added while less than a chunk is gathered: any text of up to a chunk's characters fits. */
const ROOM_BYTES = 4 * CHUNK_BYTES;

/**
 * Text for a file, encoded into one buffer as it is added and written to its descriptor a megabyte at a time.
 * Nothing added is kept as a string: holding a megabyte of small strings until the write made every young
 * collection copy them (a third of the time of writing a million-task sweep's files).
 */
export class TextChunks {
  private buffer: Buffer | undefined;
  private used = 0;
  /** A text too long for the buffer's room, written after it. */
  private rest: string | undefined;

  /** Add text; true when a chunk's worth is gathered and should be written out (before anything more is added). */
  add(text: string): boolean {
    this.buffer ??= Buffer.allocUnsafe(ROOM_BYTES);
    const room = ROOM_BYTES - this.used;
    if (this.rest === undefined && (text.length * 3 <= room || Buffer.byteLength(text) <= room))
      this.used += this.buffer.write(text, this.used, 'utf8');
    else if (this.rest === undefined) this.rest = text;
    else this.rest += text;
    return this.used >= CHUNK_BYTES || this.rest !== undefined;
  }

  /** Write what is gathered to `fd`. */
  writeTo(fd: number): void {
    if (this.buffer !== undefined) writeAll(fd, this.buffer, this.used);
    this.used = 0;
    if (this.rest !== undefined) {
      const bytes = Buffer.from(this.rest, 'utf8');
      this.rest = undefined;
      writeAll(fd, bytes, bytes.length);
    }
  }
}

function writeAll(fd: number, bytes: Buffer, length: number): void {
  for (let done = 0; done < length; ) done += writeSync(fd, bytes, done, length - done);
}

/**
 * A file replaced atomically once it is whole: its text is written in chunks to a temporary file in the same
 * directory, which `commit` fsyncs and renames over the path (then fsyncs the directory); `abort` removes it.
 * Creates missing parent directories. Not a lock: callers that read-modify-write must hold one. A system error
 * names the file's path (a write to an open file names none).
 */
export class AtomicFile {
  private fd: number;
  private readonly temp: string;
  private readonly text = new TextChunks();

  constructor(readonly path: string) {
    const dir = dirname(path);
    mkdirSync(dir, { recursive: true });
    this.temp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
    this.fd = openSync(this.temp, 'wx', 0o644);
  }

  /** Add text to the file. */
  write(text: string): void {
    if (this.text.add(text)) this.guard(() => this.flush());
  }

  /**
   * Write out the text gathered so far and give the temporary file's descriptor, for another writer in this
   * process (a worker thread) to add to at its end. Writing here waits until that writer is done; `commit` and
   * `abort` stay here.
   */
  handOver(): number {
    this.guard(() => this.flush());
    return this.fd;
  }

  /** Write what is left, make it durable and put it in place of the file. */
  commit(): void {
    this.guard(() => {
      this.flush();
      fsyncSync(this.fd);
      closeSync(this.fd);
      this.fd = -1;
      renameSync(this.temp, this.path);
    });
    syncDirectory(dirname(this.path));
  }

  /** Give up: the file stays as it was, and the temporary file is removed. */
  abort(): void {
    if (this.fd >= 0) closeSync(this.fd);
    this.fd = -1;
    rmSync(this.temp, { force: true });
  }

  private flush(): void {
    this.text.writeTo(this.fd);
  }

  private guard(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.abort();
      if (isSystemError(err)) err.path = this.path;
      throw err;
    }
  }
}

function syncDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch {
    // Some filesystems refuse fsync on a directory; the rename itself has happened.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
