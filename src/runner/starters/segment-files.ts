import fs from 'node:fs';
import { INDEX_ENTRY, segmentFile } from '../../protocol/log-slices.js';
import type { SegmentSpan } from './starter.js';

/** The open segments of one (prefix, slot): its two outputs, its index, and the next entry's number. */
interface Open {
  out: number;
  err: number;
  idx: number;
  next: number;
}

/** Segments open at once; a pool worker may run many launches over its life. */
const MAX_OPEN = 64;

/**
 * Slot segments for Node's process starter, as the fork servers keep them (src/protocol/log-slices.ts): opened once per
 * (prefix, slot) with O_APPEND, sizes taken before a task starts and after it is reaped, its ends written into
 * the index before the slot's next task starts.
 */
export class SegmentFiles {
  private readonly open = new Map<string, Open>();

  /** The descriptors a task of this slot writes to, and where its output begins. Throws when they cannot be opened. */
  begin(prefix: string, slot: number): { out: number; err: number; span: SegmentSpan } {
    const s = this.get(prefix, slot);
    const span = { seq: s.next++, outOff: fs.fstatSync(s.out).size, errOff: fs.fstatSync(s.err).size };
    return { out: s.out, err: s.err, span };
  }

  /**
   * The task has been reaped: its ends, also into the index (an index that cannot be written, a full disk, still
   * gives the ends: the record has them). Undefined when the segments cannot be read.
   */
  end(prefix: string, slot: number, span: SegmentSpan): SegmentSpan | undefined {
    let s: Open;
    let outEnd: number;
    let errEnd: number;
    try {
      s = this.get(prefix, slot);
      outEnd = fs.fstatSync(s.out).size;
      errEnd = fs.fstatSync(s.err).size;
    } catch {
      return undefined;
    }
    s.next = Math.max(s.next, span.seq + 1);
    try {
      const entry = `${String(outEnd).padStart(15, '0')} ${String(errEnd).padStart(15, '0')}\n`;
      fs.writeSync(s.idx, entry, span.seq * INDEX_ENTRY);
    } catch {
      // Readers of a running attempt go by the size until its end record is in.
    }
    return { ...span, outEnd, errEnd };
  }

  close(): void {
    for (const s of this.open.values()) for (const fd of [s.out, s.err, s.idx]) fs.closeSync(fd);
    this.open.clear();
  }

  private get(prefix: string, slot: number): Open {
    const key = `${prefix}\0${slot}`;
    const found = this.open.get(key);
    if (found) {
      this.open.delete(key);
      this.open.set(key, found);
      return found;
    }
    const fds: number[] = [];
    try {
      fds.push(fs.openSync(segmentFile(prefix, slot, 'out'), 'a'));
      fds.push(fs.openSync(segmentFile(prefix, slot, 'err'), 'a'));
      fds.push(fs.openSync(segmentFile(prefix, slot, 'idx'), fs.constants.O_RDWR | fs.constants.O_CREAT));
    } catch (err) {
      for (const fd of fds) fs.closeSync(fd);
      throw err;
    }
    const s = {
      out: fds[0]!,
      err: fds[1]!,
      idx: fds[2]!,
      next: Math.floor(fs.fstatSync(fds[2]!).size / INDEX_ENTRY),
    };
    this.open.set(key, s);
    for (const [k, old] of this.open) {
      if (this.open.size <= MAX_OPEN) break;
      this.open.delete(k);
      for (const fd of [old.out, old.err, old.idx]) fs.closeSync(fd);
    }
    return s;
  }
}
