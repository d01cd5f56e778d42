import { MessageChannel, type MessagePort, receiveMessageOnPort, type Worker } from 'node:worker_threads';
import type { SweepPlan } from './expand.js';
import type { JobfileWriter } from './jobfile.js';
import type { ParamsFileWriter } from './params-file.js';
import { startSweepFilesWorker } from './sweep-files-start.js';
import { BATCHES, DONE, FAILED, RUNNING, SLOTS, STATUS, STOP, type SweepFile } from './sweep-files-write.js';

/** A worker silent this long (no batch written) is taken for dead: its thread cannot be watched otherwise. */
const STALL_MS = 60_000;
/** How long a stopped worker is given to notice. */
const STOP_MS = 5_000;

/** The two files a prelaunch writes, open (not yet committed), with their paths for messages. */
export interface SweepFileWriters {
  jobfile: JobfileWriter;
  paramsFile: ParamsFileWriter;
  paths: Record<SweepFile, string>;
}

/**
 * A sweep's tasks written into the jobfile and params file by a worker thread while this thread does other
 * work (prelaunch: records the same tasks in the ledger). The worker plans the sweep again from its spec and
 * appends to the files' temporary copies; it never closes or renames them: after `finish`, the caller commits
 * both writers as usual, or aborts them after `stop`. Everything here is synchronous, so it fits inside a
 * ledger transaction.
 */
export class SweepFilesWorker {
  private readonly state = new Int32Array(new SharedArrayBuffer(SLOTS * Int32Array.BYTES_PER_ELEMENT));
  private readonly port: MessagePort;
  private readonly worker: Worker;
  private ended = false;

  /** Start writing the plan's tasks after what the writers hold. */
  constructor(
    plan: SweepPlan,
    private readonly files: SweepFileWriters,
  ) {
    const channel = new MessageChannel();
    this.port = channel.port1;
    this.worker = startSweepFilesWorker({
      spec: plan.spec,
      startId: plan.startId,
      jobfile: files.jobfile.handOver(),
      paramsFile: files.paramsFile.handOver(),
      state: this.state.buffer as SharedArrayBuffer,
      port: channel.port2,
    });
    // The thread ends by itself; a failed process must not wait for it.
    this.worker.unref();
  }

  /** Wait until the worker has written (and fsynced) the files, and give them back to their writers; or throw why not. */
  finish(): void {
    let batches = -1;
    let quietSince = Date.now();
    while (Atomics.load(this.state, STATUS) === RUNNING) {
      Atomics.wait(this.state, STATUS, RUNNING, 1000);
      const now = Atomics.load(this.state, BATCHES);
      if (now !== batches) {
        batches = now;
        quietSince = Date.now();
      } else if (Date.now() - quietSince > STALL_MS) {
        this.stop();
        throw new Error(`the thread writing ${this.files.paths.jobfile} stopped answering`);
      }
    }
    this.ended = true;
    const status = Atomics.load(this.state, STATUS);
    if (status !== DONE) throw this.failure(status);
    const added = Atomics.load(this.state, BATCHES) > 0;
    this.files.jobfile.resume(added);
    this.files.paramsFile.resume(added);
  }

  /** Ask the worker to stop and wait (a few seconds at most) until it has; the caller then aborts the writers. */
  stop(): void {
    if (this.ended) return;
    this.ended = true;
    Atomics.store(this.state, STOP, 1);
    const deadline = Date.now() + STOP_MS;
    while (Atomics.load(this.state, STATUS) === RUNNING && Date.now() < deadline)
      Atomics.wait(this.state, STATUS, RUNNING, 100);
    // Still writing (a hung disk): end the thread; the process is about to fail anyway.
    if (Atomics.load(this.state, STATUS) === RUNNING) void this.worker.terminate();
    this.port.close();
  }

  /** The worker's failure as an error of this thread: a system error names the file's path. */
  private failure(status: number): Error {
    const facts = receiveMessageOnPort(this.port)?.message as
      | { message: string; code?: string; errno?: number; syscall?: string; file?: SweepFile }
      | undefined;
    this.port.close();
    if (status !== FAILED || !facts)
      return new Error('the thread writing the jobfile ended without finishing');
    const err = new Error(facts.message) as NodeJS.ErrnoException;
    if (facts.code !== undefined) err.code = facts.code;
    if (facts.errno !== undefined) err.errno = facts.errno;
    if (facts.syscall !== undefined) err.syscall = facts.syscall;
    if (facts.file !== undefined) err.path = this.files.paths[facts.file];
    return err;
  }
}
