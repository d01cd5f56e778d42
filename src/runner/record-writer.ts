import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describeSystemError, isSystemError, type SystemError } from '../errors.js';
import { atPath } from '../files.js';
import type { AttemptRecord } from '../protocol/records.js';

/** What a record writer tells its runner. */
export interface RecordWriterEvents {
  /** The file refused a write (disk full, read-only, I/O error): records are kept in memory from now on. */
  onBlocked?(err: SystemError): void;
  /** Everything kept in memory has been written: the file takes records again. */
  onResumed?(): void;
}

/** How often a blocked writer tries again. */
const RETRY_MS = 1000;

/**
 * Appends records to a file, whole lines only. The records of one turn of the event loop go out in one write at
 * its end (before the runner waits for anything again), so a SIGKILL loses only what happened in the turn it
 * interrupts. When the file refuses a write (disk full, read-only, I/O error), the part of a line that got
 * written is cut off again, the writer keeps what it could not write in memory, says so once on stderr, and
 * tries again every second until it is written. A process that exits while records are kept saves them in a file
 * under the temporary folder and says where (see `spill`).
 */
export class RecordWriter {
  private readonly fd: number;
  /** Bytes of the file, all whole lines. */
  private size: number;
  /** Lines not written yet. */
  private pending = '';
  private flushQueued = false;
  /** The error that made the writer keep records in memory, while it does. */
  private refused: SystemError | undefined;
  private retry: NodeJS.Timeout | undefined;
  /** A partial line could not be cut off: the next write starts a new line (the damaged one is skipped). */
  private torn = false;
  private readonly drained: (() => void)[] = [];
  private readonly onExit = () => this.spill();

  constructor(
    readonly file: string,
    private readonly events: RecordWriterEvents = {},
  ) {
    this.fd = atPath(file, () => fs.openSync(file, 'a'));
    this.size = fs.fstatSync(this.fd).size;
  }

  /** True while the file refuses writes and records are kept in memory. */
  get blocked(): boolean {
    return this.refused !== undefined;
  }

  /** Append one record as one line. */
  write(record: AttemptRecord): void {
    if (!this.flushQueued && !this.refused) {
      this.flushQueued = true;
      process.nextTick(() => this.flush());
    }
    this.pending += `${JSON.stringify(record)}\n`;
  }

  /** Write what is pending now (while blocked, only the retry timer writes). Returns true when all is written. */
  flush(): boolean {
    this.flushQueued = false;
    if (this.refused) return false;
    return this.writePending();
  }

  /** Call `fn` once everything written so far is in the file (at once when it is). */
  whenWritten(fn: () => void): void {
    if (this.pending === '' && !this.refused) fn();
    else {
      this.drained.push(fn);
      if (!this.refused) this.flush();
    }
  }

  /** Close the file; what is still pending stays in memory (and is saved at exit). */
  close(): void {
    this.flush();
    fs.closeSync(this.fd);
    if (this.retry) clearInterval(this.retry);
    this.retry = undefined;
  }

  private writePending(): boolean {
    if (this.pending === '') return true;
    const text = this.torn ? `\n${this.pending}` : this.pending;
    const bytes = Buffer.from(text);
    let done = 0;
    let error: unknown;
    try {
      while (done < bytes.length) {
        const n = fs.writeSync(this.fd, bytes, done, bytes.length - done);
        if (n <= 0) throw Object.assign(new Error('write wrote nothing'), { code: 'EIO', syscall: 'write' });
        done += n;
      }
    } catch (err) {
      error = err;
    }
    if (error === undefined) {
      this.size += done;
      this.pending = '';
      this.torn = false;
      this.unblock();
      return true;
    }
    if (!isSystemError(error)) throw error;
    error.path ??= this.file;
    // Keep the whole lines that got out; cut the part of a line that did not.
    const whole = done === 0 ? 0 : bytes.lastIndexOf(0x0a, done - 1) + 1;
    if (whole > 0) {
      this.size += whole;
      this.torn = false;
      this.pending = bytes.subarray(whole).toString('utf8');
    }
    if (done > whole) {
      try {
        fs.ftruncateSync(this.fd, this.size);
      } catch {
        this.torn = true; // the next write ends the damaged line first: ingestion skips it and says so
      }
    }
    this.block(error);
    return false;
  }

  private block(err: SystemError): void {
    if (this.refused) return;
    this.refused = err;
    const lines = this.pending.split('\n').length - 1;
    process.stderr.write(
      `drover: ${describeSystemError(err, this.file, `keeping ${lines} record(s) in memory and trying again every second; no new task starts until they are written`)}\n`,
    );
    process.on('exit', this.onExit);
    this.retry = setInterval(() => this.writePending(), RETRY_MS);
    this.events.onBlocked?.(err);
  }

  private unblock(): void {
    if (this.refused) {
      this.refused = undefined;
      clearInterval(this.retry);
      this.retry = undefined;
      process.off('exit', this.onExit);
      process.stderr.write(`drover: records written again to ${this.file}\n`);
      this.events.onResumed?.();
    }
    for (const fn of this.drained.splice(0)) fn();
  }

  /**
   * The process exits with records it could not write: save them in a file under the temporary folder (often
   * another disk) and say how to hand them to drover, or, when that fails too, that they are lost.
   */
  private spill(): void {
    if (this.pending === '') return;
    const lines = this.pending.split('\n').length - 1;
    const spill = path.join(os.tmpdir(), `drover-unwritten-${path.basename(this.file)}`);
    let before = 0;
    try {
      before = fs.statSync(spill).size;
    } catch {}
    try {
      fs.writeFileSync(spill, this.pending, { flag: 'a' });
      process.stderr.write(
        `drover: ${lines} record(s) could not be written to ${this.file}; saved in ${spill}: once there is space, run: cat ${spill} >> ${this.file}\n`,
      );
    } catch {
      try {
        if (before === 0) fs.rmSync(spill, { force: true });
        else fs.truncateSync(spill, before);
      } catch {}
      process.stderr.write(
        `drover: ${lines} record(s) could not be written to ${this.file} and are lost: their tasks will show lost\n`,
      );
    }
  }
}

/**
 * How long a stopped runner (Ctrl-C, SIGTERM, `drover cancel`) waits for space to write the records it keeps
 * before it saves them under the temporary folder and ends: a stop signal often comes once (`timeout`, a
 * scheduler, systemd, which kill for good soon after), so waiting for space without end would lose them all.
 */
const STOPPED_WAIT_MS = 10_000;

/**
 * Call `end` once everything `writer` was given is in its file; a stopped runner's `end` comes after
 * STOPPED_WAIT_MS at the latest while the file refuses writes (it may come twice: `end` minds that).
 */
export function endWhenWritten(writer: RecordWriter, stopped: boolean, end: () => void): void {
  writer.whenWritten(end);
  if (stopped && writer.blocked) {
    process.stderr.write(
      `drover: stopping: waiting up to ${STOPPED_WAIT_MS / 1000} s for space to write the last records, then saving them in the temporary folder\n`,
    );
    setTimeout(end, STOPPED_WAIT_MS);
  }
}
