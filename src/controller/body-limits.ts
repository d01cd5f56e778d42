import type { IncomingMessage } from 'node:http';

/**
 * What request bodies may cost the controller. Each body is at most MAX_BODY_BYTES; at most `slots` bodies are
 * read and parsed at once, whoever sends them (others wait, unread, in the kernel's socket buffers): so the
 * memory that bodies take is bounded however many workers or connections send at the same time.
 */
export class BodyGate {
  private busy = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly slots: number) {}

  /** Wait for a free slot; resolves with its release function (idempotent). */
  async acquire(): Promise<() => void> {
    if (this.busy >= this.slots) await new Promise<void>((r) => this.waiting.push(r));
    else this.busy++;
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
}

/** True when a request announces a body. */
export function hasBody(req: IncomingMessage): boolean {
  const len = req.headers['content-length'];
  return (len !== undefined && len !== '0') || req.headers['transfer-encoding'] !== undefined;
}

/**
 * Read the rest of a refused request's body and throw it away (up to `maxBytes`, for at most `maxMs`), then
 * resolve. Answering before the client has sent its body and closing the connection makes the kernel reset it,
 * and the client sees EPIPE instead of the answer; drained, it reads the 413 (or 400) it was sent.
 */
export function drainBody(req: IncomingMessage, maxBytes = 256 << 20, maxMs = 10_000): Promise<void> {
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
