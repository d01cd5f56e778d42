// The sweep files worker (a worker_threads program, started by sweep-files-start.ts): writes a prelaunch's
// jobfile and params file from the sweep while the main thread records the same tasks in the ledger.
import { workerData } from 'node:worker_threads';
import { FAILED, STATUS, type SweepFilesData } from './sweep-files-write.js';

const data = workerData as SweepFilesData;
const state = new Int32Array(data.state);

/** Say how it ended: the facts of a failure first (on the port), then the status the main thread waits on. */
function end(status: number, err?: unknown): void {
  if (err !== undefined) {
    const e = err as NodeJS.ErrnoException & { file?: string };
    data.port.postMessage({
      message: e instanceof Error ? e.message : String(err),
      code: e?.code,
      errno: e?.errno,
      syscall: e?.syscall,
      file: e?.file,
    });
  }
  data.port.close();
  Atomics.store(state, STATUS, status);
  Atomics.notify(state, STATUS);
}

// Loaded here, not imported above: a module that fails to load is a failure reported like any other.
import('./sweep-files-write.js').then(
  (m) => {
    try {
      end(m.writeSweepFiles(data));
    } catch (err) {
      end(FAILED, err);
    }
  },
  (err: unknown) => end(FAILED, err),
);
