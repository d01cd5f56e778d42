import net from 'node:net';

/**
 * Slow clients, as a hostile local user makes them: a request head that announces a body, then part of that body
 * sent slowly or not at all, over a real socket. What the server does with them (answers, cuts them, or waits for
 * ever) is what the tests of its body budgets judge.
 */

/** What a slow client sends. */
export interface SlowRequest {
  method: string;
  /** The path, `/v1/...`. */
  path: string;
  headers: Record<string, string>;
  /** The whole body it pretends to send; it never sends the last byte (or, chunked, the last chunk). */
  body: string;
  /** Bytes sent with the head. */
  first: number;
  /** Then one more byte this often (undefined: nothing more). */
  trickleMs?: number;
  /** Send the body chunked (no Content-Length) instead of announcing its length. */
  chunked?: boolean;
}

/** How a slow client's request ended. */
export interface SlowEnd {
  /** The answer's status, or 0 when the connection closed without one. */
  status: number;
  /** Milliseconds from its head being sent to the answer (or the close). */
  ms: number;
}

/** A slow client on its way: `ended` resolves once the server answered or closed; `close` ends it from here. */
export interface SlowClient {
  ended: Promise<SlowEnd>;
  close(): void;
}

/** Open a connection to `url` and send `r` slowly. */
export function slowClient(url: string, r: SlowRequest): SlowClient {
  const { hostname, port } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  socket.setNoDelay(true);
  const start = performance.now();
  let trickle: NodeJS.Timeout | undefined;
  const body = Buffer.from(r.body);
  const last = body.length - 1;
  let sent = Math.min(r.first, last);
  const piece = (from: number, to: number): Buffer | string => {
    const part = body.subarray(from, to);
    if (!r.chunked) return part;
    return part.length === 0
      ? ''
      : Buffer.concat([Buffer.from(`${part.length.toString(16)}\r\n`), part, Buffer.from('\r\n')]);
  };
  const ended = new Promise<SlowEnd>((resolve) => {
    let got = '';
    const end = () => {
      clearInterval(trickle);
      const status = /^HTTP\/1\.1 (\d{3})/.exec(got)?.[1];
      resolve({ status: status === undefined ? 0 : Number(status), ms: performance.now() - start });
      socket.destroy();
    };
    socket.on('data', (d) => {
      got += d.toString('latin1');
      if (got.includes('\r\n\r\n')) end();
    });
    socket.on('close', end);
    socket.on('error', end);
  });
  socket.once('connect', () => {
    const head = [
      `${r.method} ${r.path} HTTP/1.1`,
      `Host: ${hostname}:${port}`,
      ...Object.entries(r.headers).map(([k, v]) => `${k}: ${v}`),
      r.chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${body.length}`,
      '',
      '',
    ].join('\r\n');
    socket.write(head);
    const firstPiece = piece(0, sent);
    if (firstPiece.length > 0) socket.write(firstPiece);
    if (r.trickleMs !== undefined) {
      trickle = setInterval(() => {
        if (sent >= last || socket.destroyed) return clearInterval(trickle);
        socket.write(piece(sent, sent + 1));
        sent++;
      }, r.trickleMs);
    }
  });
  return {
    ended,
    close() {
      clearInterval(trickle);
      socket.destroy();
    },
  };
}

/**
 * `n` slow clients made by `make`, each replaced as soon as the server ends it, until `stop()`: a crowd that
 * keeps its size for as long as it runs. `ends` holds how each ended.
 */
export class SlowCrowd {
  readonly ends: SlowEnd[] = [];
  private readonly open = new Set<SlowClient>();
  private stopped = false;

  constructor(
    private readonly url: string,
    private readonly make: (i: number) => SlowRequest,
    n: number,
  ) {
    for (let i = 0; i < n; i++) this.add(i);
  }

  /** Slow clients open now. */
  get size(): number {
    return this.open.size;
  }

  private add(i: number): void {
    if (this.stopped) return;
    const c = slowClient(this.url, this.make(i));
    this.open.add(c);
    void c.ended.then((e) => {
      this.open.delete(c);
      if (this.stopped) return;
      this.ends.push(e);
      this.add(i);
    });
  }

  /** Close every client still open; no more are made. */
  stop(): void {
    this.stopped = true;
    for (const c of this.open) c.close();
    this.open.clear();
  }
}
