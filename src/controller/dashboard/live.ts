import type { ServerResponse } from 'node:http';
import { refresh } from '../../backends/refresh.js';
import { folderSignature, jobSignature } from '../../ledger/dashboard.js';
import type { Ledger } from '../../ledger/ledger.js';
import type { LiveEvent } from '../../protocol/dashboard.js';

/**
 * Live pages (docs/dashboard.md): a page opens one server-sent-events stream and refetches what it shows when told
 * that something changed. While any stream is open, the hub brings the watched jobs up to date (as `drover status`
 * does: runners' records, the scheduler) at most once per REFRESH_MS and compares a cheap signature of each
 * (jobSignature); with no stream open it has no timer at all — an idle dashboard costs the server nothing.
 */

/** How often the hub looks for changes. */
const TICK_MS = 250;
/** How often a watched job is brought up to date (records ingested, the scheduler asked). */
const REFRESH_MS = 750;
/** A comment line this often keeps proxies and tunnels from closing a quiet stream. */
const PING_MS = 15_000;
/** Streams open at once, at most: a page has one, so this is many browsers; more is a client gone wrong. */
export const MAX_STREAMS = 200;

interface Watcher {
  out: ServerResponse;
  /** The job it watches, or undefined: the folder (jobs and pools pages). */
  jobId: number | undefined;
  seen: string | undefined;
}

export class LiveHub {
  private readonly watchers = new Set<Watcher>();
  private timer: NodeJS.Timeout | undefined;
  private pinger: NodeJS.Timeout | undefined;
  private readonly refreshedAt = new Map<string, number>();

  constructor(
    private readonly ledger: Ledger,
    private readonly log: (err: unknown) => void,
  ) {}

  /** Streams open now. */
  get size(): number {
    return this.watchers.size;
  }

  /** True while the hub has a timer (only while some stream is open). */
  get ticking(): boolean {
    return this.timer !== undefined;
  }

  /** Serve an event stream on `out` until the client goes (or a 429 when MAX_STREAMS are open). */
  add(out: ServerResponse, jobId: number | undefined): void {
    if (this.watchers.size >= MAX_STREAMS) {
      out.writeHead(429, { 'content-type': 'application/json', 'retry-after': '5' });
      out.end(
        JSON.stringify({
          error: { code: 'busy', message: `${MAX_STREAMS} live streams are open already: close some pages` },
        }),
      );
      return;
    }
    out.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      connection: 'keep-alive',
    });
    out.write('retry: 1000\n\n');
    const w: Watcher = { out, jobId, seen: undefined };
    this.watchers.add(w);
    out.on('close', () => {
      this.watchers.delete(w);
      if (this.watchers.size === 0) this.stop();
    });
    this.start();
    this.check([w]);
  }

  /** End every stream (server shutdown). */
  close(): void {
    for (const w of this.watchers) w.out.end();
    this.watchers.clear();
    this.stop();
  }

  /**
   * Bring a job (or, undefined, every job) up to date unless that was done in the last REFRESH_MS: the pages'
   * reads share it with the stream's checks, so a change the hub reports is not ingested again by the two or three
   * requests of the redraw it causes (nor the scheduler asked again).
   */
  refresh(jobId: number | undefined): void {
    const key = jobId === undefined ? 'folder' : String(jobId);
    const now = Date.now();
    // A refresh of every job covers this one too.
    const last = Math.max(this.refreshedAt.get(key) ?? 0, this.refreshedAt.get('folder') ?? 0);
    if (now - last < REFRESH_MS) return;
    this.refreshedAt.set(key, now);
    refresh(this.ledger, jobId);
  }

  private start(): void {
    this.timer ??= setInterval(() => this.check([...this.watchers]), TICK_MS);
    this.pinger ??= setInterval(() => {
      for (const w of this.watchers) w.out.write(': ping\n\n');
    }, PING_MS);
  }

  private stop(): void {
    clearInterval(this.timer);
    clearInterval(this.pinger);
    this.timer = undefined;
    this.pinger = undefined;
    this.refreshedAt.clear();
  }

  /** Bring each watched job up to date (throttled), and tell each watcher whose view changed. */
  private check(watchers: Watcher[]): void {
    const signatures = new Map<string, string>();
    for (const w of watchers) {
      const key = w.jobId === undefined ? 'folder' : String(w.jobId);
      let sig = signatures.get(key);
      if (sig === undefined) {
        try {
          this.refresh(w.jobId);
          sig = w.jobId === undefined ? folderSignature(this.ledger) : jobSignature(this.ledger, w.jobId);
        } catch (err) {
          this.log(err);
          continue;
        }
        signatures.set(key, sig);
      }
      if (sig !== w.seen) {
        // The first event only says the stream is live; the page fetched what it shows already.
        const event: LiveEvent = w.seen === undefined ? 'ready' : 'change';
        w.out.write(`event: ${event}\ndata: {}\n\n`);
        w.seen = sig;
      }
    }
  }
}
