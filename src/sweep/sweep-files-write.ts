import { fsyncSync } from 'node:fs';
import type { MessagePort } from 'node:worker_threads';
import { TextChunks } from './atomic-file.js';
import { planSweep } from './expand.js';
import { jobfileEntriesText } from './jobfile.js';
import { paramsRecordsText } from './params-file.js';
import type { SweepSpec } from './types.js';

/** What the sweep files worker is given (workerData): the sweep, and where its tasks' text goes. */
export interface SweepFilesData {
  /** The sweep, planned again in the worker (the same tasks as the main thread's plan). */
  spec: SweepSpec;
  /** Id of its first task. */
  startId: number;
  /** The jobfile's temporary file, open for writing at its end, and whether it has no entry yet. */
  jobfile: { fd: number; empty: boolean };
  /** The params file's likewise. */
  paramsFile: { fd: number; empty: boolean };
  /** Int32 slots shared with the main thread (STATUS, STOP, BATCHES). */
  state: SharedArrayBuffer;
  /** Where a failure's facts are posted before the state says FAILED. */
  port: MessagePort;
}

/** The slots of SweepFilesData.state: the status (RUNNING, DONE, FAILED or STOPPED), which the main thread waits on. */
export const STATUS = 0;
/** Set to 1 by the main thread: stop at the next batch. */
export const STOP = 1;
/** Batches written so far: the main thread's sign that the worker is alive. */
export const BATCHES = 2;
/** How many slots there are. */
export const SLOTS = 3;

export const RUNNING = 0;
export const DONE = 1;
export const FAILED = 2;
/** Stopped on request, before the end. */
export const STOPPED = 3;

/** Which of the two files a failure is about. */
export type SweepFile = 'jobfile' | 'paramsFile';

/** Write at the descriptor's end, a megabyte at a time; a failure is tagged with the file's role (`file`). */
class Appender {
  private readonly text = new TextChunks();
  constructor(
    private readonly fd: number,
    private readonly file: SweepFile,
  ) {}

  write(text: string): void {
    if (this.text.add(text)) this.guard(() => this.flush());
  }

  /** Write out what is gathered and make the file durable. */
  finish(): void {
    this.guard(() => {
      this.flush();
      fsyncSync(this.fd);
    });
  }

  private guard(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      if (err instanceof Error) Object.assign(err, { file: this.file });
      throw err;
    }
  }

  private flush(): void {
    this.text.writeTo(this.fd);
  }
}

/**
 * Write the sweep's entries into the jobfile and its records into the params file (neither closed nor renamed:
 * the main thread does that once the ledger has the tasks), fsynced; stops early when asked. DONE or STOPPED.
 */
export function writeSweepFiles(data: SweepFilesData): typeof DONE | typeof STOPPED {
  const state = new Int32Array(data.state);
  const job = new Appender(data.jobfile.fd, 'jobfile');
  const params = new Appender(data.paramsFile.fd, 'paramsFile');
  let jobEmpty = data.jobfile.empty;
  let paramsEmpty = data.paramsFile.empty;
  for (const b of planSweep(data.spec, { startId: data.startId }).batches()) {
    if (Atomics.load(state, STOP) !== 0) return STOPPED;
    if (b.ids.length === 0) continue;
    job.write(jobfileEntriesText(b, jobEmpty));
    params.write(paramsRecordsText(b, paramsEmpty));
    jobEmpty = false;
    paramsEmpty = false;
    Atomics.add(state, BATCHES, 1);
  }
  job.finish();
  params.finish();
  return DONE;
}
