import { Worker } from 'node:worker_threads';
import type { SweepFilesData } from './sweep-files-write.js';

/**
 * Start the sweep files worker (sweep-files-worker.ts, beside this module). The bundle (scripts/bundle.mjs)
 * replaces this module with one that starts the worker from its bundled text.
 */
export function startSweepFilesWorker(data: SweepFilesData): Worker {
  return new Worker(new URL('./sweep-files-worker.js', import.meta.url), {
    workerData: data,
    transferList: [data.port],
  });
}
