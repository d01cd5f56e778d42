import { type ApiClient, ApiError } from '../protocol/client.js';
import type { AttemptRecord } from '../protocol/records.js';
import { Outbox } from './outbox.js';

/** How long a record waits for others before a report is sent (ms). */
const REPORT_DELAY_MS = 50;

/**
 * Sends a worker's attempt records to the controller: one report in flight at a time (records that come
 * meanwhile go in the next one), each of one report's worth (outbox.ts). The first record waits a few
 * milliseconds for company, so a short task's start and end travel together.
 */
export class Reporter {
  readonly outbox = new Outbox();
  private reporting = false;
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

  /** Send what waits, unless a report is in flight. */
  flush(): void {
    if (this.reporting || !this.outbox.pending || this.id() === '') return;
    this.reporting = true;
    setTimeout(async () => {
      const batches = this.outbox.take();
      try {
        const a = await this.api.call<{ seq: number }>('POST', `/workers/${this.id()}/report`, { batches });
        this.outbox.ack(a.seq);
        this.reporting = false;
        this.flush();
      } catch (err) {
        this.reporting = false; // the poll loop reconnects; records stay and go with the next report
        if (err instanceof ApiError && err.code === 'not-yours') {
          // Records of attempts taken back while the controller thought it lost: not its to report any more.
          this.log(
            `the controller refused the records of ${err.refused.length} attempt(s) no longer mine: dropped`,
          );
          this.outbox.refuse(err.refused);
          this.flush();
          return;
        }
        if (err instanceof ApiError && (err.status === 401 || err.status === 403)) this.refused = true;
        setTimeout(() => this.flush(), 500).unref();
      }
    }, REPORT_DELAY_MS);
  }
}
