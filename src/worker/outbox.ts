import type { AttemptKey, ReportBatch } from '../protocol/messages.js';
import type { AttemptRecord, EndRecord, SkipRecord, StartRecord } from '../protocol/records.js';

/** A record the controller is told of. */
type Reported = StartRecord | EndRecord | SkipRecord;

/** Most records per batch and per report (well under the controller's MAX_REPORT_RECORDS). */
const MAX_RECORDS = 2000;
/**
 * Most characters of records per batch and per report: a quarter of the controller's MAX_BODY_BYTES, so even
 * text of multi-byte characters stays under it.
 */
const MAX_CHARS = 256 << 10;

/** A record waiting to be sent, with the length of its JSON. */
interface Pending {
  record: AttemptRecord;
  chars: number;
}

/** A numbered batch, with the length of its records' JSON. */
interface Sent extends ReportBatch {
  chars: number;
}

/**
 * Records waiting to reach the controller, numbered in batches so a resend after a lost answer or a controller
 * restart is applied once. A task stays "held" until the record of its end was acknowledged. Batches and reports
 * stay small (MAX_RECORDS, MAX_CHARS), whatever piled up while the controller was away.
 */
export class Outbox {
  private readonly open = new Map<number, Pending[]>();
  private readonly sent: Sent[] = [];
  private seq = 0;
  /** `launch:task` → the task and the attempt it runs, from receipt until its end's record is acknowledged. */
  readonly holding = new Map<string, AttemptKey>();

  /** The attempts it holds, as a registration lists them. */
  held(): AttemptKey[] {
    return [...this.holding.values()].map((h) => ({ launch: h.launch, task: h.task, attempt: h.attempt }));
  }

  /** Take a record of a launch (start, end, skip; others are not reported). */
  add(launch: number, r: AttemptRecord): void {
    if (r.type !== 'start' && r.type !== 'end' && r.type !== 'skip') return;
    let list = this.open.get(launch);
    if (!list) {
      list = [];
      this.open.set(launch, list);
    }
    list.push({ record: r, chars: JSON.stringify(r).length });
  }

  /** True when something waits to be sent or acknowledged. */
  get pending(): boolean {
    return this.open.size > 0 || this.sent.length > 0;
  }

  /** Number the open records into batches and return the oldest batches not acknowledged yet, one report's worth. */
  take(maxRecords = MAX_RECORDS, maxChars = MAX_CHARS): ReportBatch[] {
    for (const [launch, list] of this.open) {
      let batch: Sent | undefined;
      for (const p of list) {
        if (!batch || batch.records.length >= maxRecords || batch.chars + p.chars > maxChars) {
          batch = { seq: ++this.seq, launch, records: [], chars: 0 };
          this.sent.push(batch);
        }
        batch.records.push(p.record);
        batch.chars += p.chars;
      }
    }
    this.open.clear();
    const out: ReportBatch[] = [];
    let records = 0;
    let chars = 0;
    for (const b of this.sent) {
      if (out.length > 0 && (records + b.records.length > maxRecords || chars + b.chars > maxChars)) break;
      out.push({ seq: b.seq, launch: b.launch, records: b.records });
      records += b.records.length;
      chars += b.chars;
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

  /**
   * The controller refused the records of these attempts (`not-yours`): they are not this worker's any more (it
   * was taken for lost meanwhile, and the task went elsewhere). A skip is named with attempt 0, and a launch that
   * is not open (any more) with task 0: all of its records go. Drop them, and the tasks, so the rest can go;
   * returns how many records were dropped (0: the refusal named nothing this outbox has).
   */
  refuse(keys: readonly AttemptKey[]): number {
    const launches = new Set(keys.filter((k) => k.task === 0).map((k) => k.launch));
    const wanted = new Set(keys.map((k) => `${k.launch}:${k.task}:${k.attempt}`));
    const dropped = this.drop(
      (launch, r) =>
        launches.has(launch) || wanted.has(`${launch}:${r.task}:${r.type === 'skip' ? 0 : r.attempt}`),
    );
    for (const [key, h] of this.holding) {
      if (launches.has(h.launch)) this.holding.delete(key);
    }
    for (const k of keys) {
      const key = `${k.launch}:${k.task}`;
      const h = this.holding.get(key);
      if (h && (k.attempt === 0 || h.attempt === k.attempt)) this.holding.delete(key);
    }
    return dropped;
  }

  /**
   * These attempts it holds are no longer its own (the controller took it for lost, or does not know it): forget
   * them and drop every record of them not acknowledged yet — a skip of such a task is its attempt's, as the
   * worker holds one attempt of a task at a time.
   */
  disown(keys: readonly AttemptKey[]): void {
    const attempts = new Set(keys.map((k) => `${k.launch}:${k.task}:${k.attempt}`));
    const tasks = new Set(keys.map((k) => `${k.launch}:${k.task}`));
    this.drop((launch, r) =>
      r.type === 'skip' ? tasks.has(`${launch}:${r.task}`) : attempts.has(`${launch}:${r.task}:${r.attempt}`),
    );
    for (const k of keys) {
      const key = `${k.launch}:${k.task}`;
      if (this.holding.get(key)?.attempt === k.attempt) this.holding.delete(key);
    }
  }

  /** Drop the reported records (start, end, skip) that `gone` names, and batches left empty; how many went. */
  private drop(gone: (launch: number, r: Reported) => boolean): number {
    let dropped = 0;
    const keep = (launch: number, r: AttemptRecord) => {
      if ((r.type === 'start' || r.type === 'end' || r.type === 'skip') && gone(launch, r)) {
        dropped++;
        return false;
      }
      return true;
    };
    for (const b of this.sent) b.records = b.records.filter((r) => keep(b.launch, r));
    for (const [launch, list] of this.open) {
      const left = list.filter((p) => keep(launch, p.record));
      if (left.length > 0) this.open.set(launch, left);
      else this.open.delete(launch);
    }
    // An empty batch would be sent forever: the controller refuses one of a launch that is not open.
    for (let i = this.sent.length - 1; i >= 0; i--)
      if (this.sent[i]!.records.length === 0) this.sent.splice(i, 1);
    return dropped;
  }
}
