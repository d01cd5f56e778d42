import path from 'node:path';
import { attemptFile, INDEX_ENTRY, indexOf } from '../protocol/log-slices.js';
import type { AttemptKey } from '../protocol/messages.js';
import type { AttemptRecord, EndRecord, StartRecord } from '../protocol/records.js';
import type { FileShipper } from './file-shipper.js';

/** Where an attempt's output is on this worker, from its start record. */
interface Started {
  out: string;
  err: string;
  /** Its entry in its segments' index (output in segments only). */
  seq: number | undefined;
}

/**
 * The order of a worker without a shared filesystem: an attempt's logs are tailed to the controller from its
 * start, and its end record is passed on (to be reported) only once the controller has all of its output and its
 * result file — so when `drover logs` or `results` sees an attempt ended, its files are whole on the controller.
 * Start and skip records go at once. The local files keep the names they have on the controller (the launch's
 * log folder: `TASK.ATTEMPT.out`, or the worker's segments `ID.SLOT.out` and their index).
 */
export class ShippedRecords {
  private readonly started = new Map<string, Started>();
  /** Ends waiting for their bytes: those disowned meanwhile are never passed on. */
  private readonly waiting = new Set<string>();
  /** Segment files tailed (and their index), with their launch. */
  private readonly segments = new Map<string, number>();

  constructor(
    private readonly shipper: FileShipper,
    private readonly forward: (launch: number, r: AttemptRecord) => void,
  ) {}

  /** Take a record of the worker's runners. */
  add(launch: number, r: AttemptRecord): void {
    if (r.type === 'start') this.onStart(launch, r);
    if (r.type !== 'end') {
      this.forward(launch, r);
      return;
    }
    const key = `${launch}:${r.task}:${r.attempt}`;
    this.waiting.add(key);
    void this.whole(launch, r).then(() => {
      if (this.waiting.delete(key)) this.forward(launch, r);
      this.idle(launch);
    });
  }

  /** Ends that wait for their bytes. */
  get pending(): number {
    return this.waiting.size;
  }

  /** These attempts are no longer the worker's: their ends, if they wait, are dropped. */
  disown(keys: readonly AttemptKey[]): void {
    for (const k of keys) {
      this.waiting.delete(`${k.launch}:${k.task}:${k.attempt}`);
      this.started.delete(`${k.launch}:${k.task}:${k.attempt}`);
    }
  }

  private onStart(launch: number, r: StartRecord): void {
    if (!r.out || !r.err) return; // its output could not be opened: nothing to send
    this.started.set(`${launch}:${r.task}:${r.attempt}`, { out: r.out, err: r.err, seq: r.seq });
    const segments = r.seq !== undefined;
    for (const f of segments ? [indexOf(r.out), r.out, r.err] : [r.out, r.err]) {
      this.shipper.tail(launch, path.basename(f), f, segments);
      if (segments) this.segments.set(f, launch);
    }
  }

  /**
   * After an attempt's end went: the segments of a launch it holds no attempt of any more are not looked at again
   * (a later task of the launch tails them again, from the controller's offset), so a worker that ran many
   * launches looks only at the files of those it runs.
   */
  private idle(launch: number): void {
    if ([...this.started.keys()].some((k) => k.startsWith(`${launch}:`))) return;
    for (const [f, l] of this.segments) {
      if (l !== launch) continue;
      this.shipper.forget(launch, path.basename(f));
      this.segments.delete(f);
    }
  }

  /** Resolves when the controller has the attempt's output up to its end, and its result file. */
  private async whole(launch: number, r: EndRecord): Promise<void> {
    const key = `${launch}:${r.task}:${r.attempt}`;
    const s = this.started.get(key);
    if (!s) return;
    const result = attemptFile(path.dirname(s.out), r.task, r.attempt, 'result');
    const name = (f: string) => path.basename(f);
    this.shipper.tail(launch, name(result), result);
    const waits = [this.shipper.shipped(launch, name(result))];
    if (s.seq === undefined) {
      waits.push(this.shipper.shipped(launch, name(s.out)), this.shipper.shipped(launch, name(s.err)));
    } else {
      waits.push(
        this.shipper.shipped(launch, name(s.out), r.out_end),
        this.shipper.shipped(launch, name(s.err), r.err_end),
        this.shipper.shipped(launch, name(indexOf(s.out)), (s.seq + 1) * INDEX_ENTRY),
      );
    }
    await Promise.all(waits);
    // Until here the attempt counts as in flight: its launch's segments are not forgotten under it (idle).
    this.started.delete(key);
    // An attempt's own files are whole: no need to look at them again. Segments go on with the slot's next task.
    this.shipper.forget(launch, name(result));
    if (s.seq === undefined) {
      this.shipper.forget(launch, name(s.out));
      this.shipper.forget(launch, name(s.err));
    }
  }
}
