import { type ApiClient, ApiError } from '../protocol/client.js';
import type { AttemptRecord } from '../protocol/records.js';
import { type Backoff, retryDelay } from '../runner/backoff.js';
import { Outbox } from './outbox.js';

/** How long a record waits for others before a report is sent (ms). */
const REPORT_DELAY_MS = 50;
/** The wait before a report is sent again after one failed: 0.25 s, doubling, at most 10 s (seconds). */
const RESEND: Backoff = { base: 0.25, max: 10, jitter: 0.2 };

/**
 * Sends a worker's attempt records to the controller: one report in flight at a time (records that come
 * meanwhile go in the next one), each of one report's worth (outbox.ts). The first record waits a few
 * milliseconds for company, so a short task's start and end travel together. A report that fails is sent
 * again after a backoff that grows with each failure in a row; records the controller refuses are dropped once.
 */
export class Reporter {
  readonly outbox = new Outbox();
  private reporting = false;
  /** Reports that failed in a row (the backoff before the next one grows with it). */
  private failures = 0;
  private retry: NodeJS.Timeout | undefined;
  /** The controller refused the worker itself (its pool is gone and its token revoked). */
  refused = false;

  constructor(
    private readonly api: ApiClient,
    /** The worker's id ('' until it registered: nothing is sent before). */
    private readonly id: () => string,
    private readonly log: (msg: string) => void,
  ) {}

  /** Take a record of a launch and send it soon. */
  add(launch: number, r: AttemptRecord): void {
    this.outbox.add(launch, r);
    this.flush();
  }

  /** True while records wait to be sent or acknowledged, or tasks to end. */
  get busy(): boolean {
    return this.outbox.holding.size > 0 || this.outbox.pending;
  }

  /** Send what waits, unless a report is in flight or waits out its backoff (`now`: send at once all the same). */
  flush(now = false): void {
    if (this.reporting || !this.outbox.pending || this.id() === '') return;
    if (this.retry && !now) return;
    clearTimeout(this.retry);
    this.retry = undefined;
    this.reporting = true;
    setTimeout(() => void this.send(), REPORT_DELAY_MS);
  }

  private async send(): Promise<void> {
    const batches = this.outbox.take();
    try {
      const a = await this.api.call<{ seq: number }>('POST', `/workers/${this.id()}/report`, { batches });
      this.outbox.ack(a.seq);
      this.failures = 0;
      this.reporting = false;
      this.flush();
    } catch (err) {
      this.reporting = false; // the poll loop reconnects; records stay and go with a later report
      if (err instanceof ApiError && err.code === 'not-yours') {
        // Records of attempts taken back while the controller thought it lost: not its to report any more.
        const dropped = this.outbox.refuse(err.refused);
        this.log(
          `the controller refused the records of ${err.refused.length} attempt(s) no longer mine: dropped ${dropped} record(s)`,
        );
        // Dropped: the rest goes at once. Nothing dropped (a refusal of nothing it has): wait, as after a failure.
        if (dropped > 0) {
          this.flush();
          return;
        }
      } else if (err instanceof ApiError && (err.status === 401 || err.status === 403)) this.refused = true;
      this.failures++;
      const ms = retryDelay(this.failures, RESEND) * 1000;
      this.retry = setTimeout(() => {
        this.retry = undefined;
        this.flush();
      }, ms);
      this.retry.unref();
    }
  }
}
