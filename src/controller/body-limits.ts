import type { IncomingMessage } from 'node:http';
import v8 from 'node:v8';
import vm from 'node:vm';

/**
 * At most `slots` bodies read and parsed at once (others wait, unread, in the kernel's socket buffers): with a
 * limit on each body, the memory that bodies take is bounded however many clients send at the same time.
 * body-budgets.ts gives each kind of sender a gate of its own.
 */
export class BodyGate {
  private busy = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly slots: number) {}

  /**
   * Wait for a free slot; resolves with its release function (idempotent). When `gone` aborts while it waits
   * (its client went), it leaves the queue and resolves with a release that does nothing: a slot passed to a
   * request that is gone would be lost for good, and with every slot lost no body is ever read again.
   */
  async acquire(gone?: AbortSignal): Promise<() => void> {
    const free = this.tryAcquire();
    if (free) return free;
    return (await this.wait(gone)) ? this.release() : () => {};
  }

  /** A free slot's release function at once, or undefined when every slot is taken (acquire waits for one). */
  tryAcquire(): (() => void) | undefined {
    if (this.busy >= this.slots) return undefined;
    this.busy++;
    return this.release();
  }

  /** The release function of a slot just taken. */
  private release(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next)
        next(); // the slot passes on
      else this.busy--;
    };
  }

  /** Wait in the queue for a slot passed on: true when it came, false when `gone` aborted first. */
  private wait(gone: AbortSignal | undefined): Promise<boolean> {
    if (gone?.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const take = () => {
        gone?.removeEventListener('abort', leave);
        resolve(true);
      };
      const leave = () => {
        const i = this.waiting.indexOf(take);
        if (i >= 0) this.waiting.splice(i, 1);
        resolve(false);
      };
      this.waiting.push(take);
      gone?.addEventListener('abort', leave, { once: true });
    });
  }
}

/** True when a request announces a body. */
export function hasBody(req: IncomingMessage): boolean {
  const len = req.headers['content-length'];
  return (len !== undefined && len !== '0') || req.headers['transfer-encoding'] !== undefined;
}

/** The longest a refused request's body is read and thrown away (see drainBody). */
export const DRAIN_MS = 10_000;

/**
 * Read the rest of a refused request's body and throw it away (up to `maxBytes`, for at most `maxMs`), then
 * resolve. Answering before the client has sent its body and closing the connection makes the kernel reset it,
 * and the client sees EPIPE instead of the answer; drained, it reads the 413 (or 400) it was sent.
 */
export function drainBody(req: IncomingMessage, maxBytes = 256 << 20, maxMs = DRAIN_MS): Promise<void> {
  if (req.complete || req.destroyed || req.readableEnded) return Promise.resolve();
  return new Promise((resolve) => {
    let seen = 0;
    const done = () => {
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', done);
      req.off('error', done);
      req.off('close', done);
      resolve();
    };
    const onData = (chunk: Buffer) => {
      seen += chunk.length;
      reclaim.drained(chunk.length);
      if (seen > maxBytes) done();
    };
    const timer = setTimeout(done, maxMs);
    req.on('data', onData);
    req.on('end', done);
    req.on('error', done);
    req.on('close', done);
    req.resume();
  });
}

/**
 * Gives back the memory of request bodies soon after they are done with, so what bodies cost the server stays
 * near what the BodyGate lets in, not what V8's heuristics let pile up. Measured in the report storm of
 * bench/pool-memory.ts (16 maximal reports and 16 of 8 MiB at once, 3 rounds), the peak was 207-222 MB without
 * it and 163-167 MB with it:
 * - every chunk a socket reads is a fresh 64 KiB buffer outside the JS heap, and V8 collects those only when they
 *   add up to 64 MiB (its external-memory trigger). The chunks drainBody throws away die young: a minor
 *   collection (about a millisecond) after every RECLAIM_BYTES of them frees them;
 * - a parsed 1 MiB report is a few MB of objects that outlive their handler's young-generation collections, and
 *   V8 let the old generation grow to 100 MB before it marked it (15 MB live after).
 * The collector is reached the way jest's leak detector reaches it.
 */
const RECLAIM_BYTES = 8 << 20;

type Collect = (opts: { type: 'minor' | 'major'; execution?: 'sync' | 'async' }) => void;

class Reclaimer {
  private readonly since = { minor: 0, major: 0 };
  private gc: Collect | undefined;

  /** `bytes` of a refused body were read and thrown away. */
  drained(bytes: number): void {
    this.count('minor', bytes);
  }

  /**
   * A request whose body of `bytes` was parsed has been answered: that body is garbage now. Parsed bodies live as
   * long as their handler, long enough to reach the old generation: a major collection, marked concurrently, not
   * a pause.
   */
  answered(bytes: number): void {
    this.count('major', bytes);
  }

  /** Count `bytes` of garbage of a kind; collect that kind once RECLAIM_BYTES of it piled up. */
  private count(kind: 'minor' | 'major', bytes: number): void {
    this.since[kind] += bytes;
    if (this.since[kind] < RECLAIM_BYTES) return;
    this.since[kind] = 0;
    if (this.gc === undefined) {
      v8.setFlagsFromString('--expose-gc');
      this.gc = vm.runInNewContext('gc') as Collect;
    }
    this.gc(kind === 'minor' ? { type: 'minor' } : { type: 'major', execution: 'async' });
  }
}

export const reclaim = new Reclaimer();
