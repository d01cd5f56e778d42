import type { ReportBatch, TaskKey } from '../protocol/messages.js';
import type { AttemptRecord } from '../runner/records.js';

/**
 * Records waiting to reach the controller, numbered in batches so a resend after a lost answer or a controller
 * restart is applied once. A task stays "held" until the record of its end was acknowledged.
 */
export class Outbox {
  private readonly open = new Map<number, AttemptRecord[]>();
  private readonly sent: ReportBatch[] = [];
  private seq = 0;
  /** `launch:task` → the task, from receipt until its end's record is acknowledged. */
  readonly holding = new Map<string, TaskKey>();

  /** Take a record of a launch (start, end, skip; others are not reported). */
  add(launch: number, r: AttemptRecord): void {
    if (r.type !== 'start' && r.type !== 'end' && r.type !== 'skip') return;
    let list = this.open.get(launch);
    if (!list) {
      list = [];
      this.open.set(launch, list);
    }
    list.push(r);
  }

  /** True when something waits to be sent or acknowledged. */
  get pending(): boolean {
    return this.open.size > 0 || this.sent.length > 0;
  }

  /** Number the open records into batches and return every batch not acknowledged yet, in order. */
  take(max = 5000): ReportBatch[] {
    for (const [launch, records] of this.open) this.sent.push({ seq: ++this.seq, launch, records });
    this.open.clear();
    const out: ReportBatch[] = [];
    let n = 0;
    for (const b of this.sent) {
      if (n > 0 && n + b.records.length > max) break;
      out.push(b);
      n += b.records.length;
    }
    return out;
  }

  /** The controller applied every batch up to `seq`: forget them, and the tasks whose end they carried. */
  ack(seq: number): void {
    while (this.sent.length > 0 && this.sent[0]!.seq <= seq) {
      const b = this.sent.shift()!;
      for (const r of b.records) {
        if (r.type === 'end' || r.type === 'skip') this.holding.delete(`${b.launch}:${r.task}`);
      }
    }
    if (seq > this.seq) this.seq = seq;
  }
}
