import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { isSystemError } from '../errors.js';

/** Text gathered before it is written: a few writes for a file of any size, and bounded memory. */
const CHUNK_CHARS = 1 << 20;

/** Text for a file, gathered and written to its descriptor a megabyte at a time. */
export class TextChunks {
  private chunks: string[] = [];
  private pending = 0;

  /** Add text; true when a chunk's worth is gathered and should be written out. */
  add(text: string): boolean {
    this.chunks.push(text);
    this.pending += text.length;
    return this.pending >= CHUNK_CHARS;
  }

  /** Write what is gathered to `fd`. */
  writeTo(fd: number): void {
    if (this.pending === 0) return;
    const bytes = Buffer.from(this.chunks.join(''), 'utf8');
    this.chunks = [];
    this.pending = 0;
    for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done, bytes.length - done);
  }
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
