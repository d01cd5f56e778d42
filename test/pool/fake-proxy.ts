import net from 'node:net';

/**
 * A fake proxy: a TCP relay between workers and the controller that cuts connections at random moments, for the
 * cut links a real network makes but cannot make on demand. Each connection through it is destroyed, both ways,
 * after a random time between `minMs` and `maxMs` (whatever is in flight is lost, half-sent or half-answered).
 */
export class FakeProxy {
  private readonly server: net.Server;
  private readonly sockets = new Set<net.Socket>();
  /** Connections it cut. */
  cuts = 0;
  /** Connections it relayed. */
  connections = 0;
  cutting = true;
  /**
   * The next this many connections carry their request to the controller and are cut at the first byte of its
   * answer (the request is applied; the client never learns how).
   */
  cutAnswers = 0;

  constructor(
    private readonly target: { host: string; port: number },
    private readonly minMs: number,
    private readonly maxMs: number,
  ) {
    this.server = net.createServer((client) => this.relay(client));
  }

  /** Listen on a free loopback port; resolves with its URL. */
  listen(): Promise<string> {
    return new Promise((resolve) => {
      this.server.listen(0, '127.0.0.1', () => {
        const { port } = this.server.address() as net.AddressInfo;
        resolve(`http://127.0.0.1:${port}`);
      });
    });
  }

  /** Stop listening and cut every connection. */
  close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private relay(client: net.Socket): void {
    this.connections++;
    const upstream = net.connect(this.target.port, this.target.host);
    this.sockets.add(client);
    this.sockets.add(upstream);
    const end = () => {
      clearTimeout(timer);
      client.destroy();
      upstream.destroy();
      this.sockets.delete(client);
      this.sockets.delete(upstream);
    };
    const timer = setTimeout(
      () => {
        if (!this.cutting) return;
        this.cuts++;
        end();
      },
      this.minMs + Math.random() * (this.maxMs - this.minMs),
    );
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.pipe(upstream);
    if (this.cutAnswers > 0) {
      this.cutAnswers--;
      upstream.once('data', () => {
        this.cuts++;
        end();
      });
    } else upstream.pipe(client);
  }
}
