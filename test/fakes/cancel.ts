import fs from 'node:fs';
import path from 'node:path';
import { type CancelRequest, cancelHere } from './controller.js';
import { alive, jobDir, readState, sleepSync, writeJson } from './state.js';

let sequence = 0;

/**
 * Ask a job's controller to cancel some of its elements (or all), and wait until it has: pending elements are
 * gone and running ones signalled when this returns, as after a real scancel/qdel. `requeue`: running ones are
 * stopped the same way and then pend again (scontrol requeue, qmod -rj). False when the job has no live
 * controller (it ended: nothing to cancel).
 */
export function requestCancel(
  dir: string,
  id: number,
  indices: CancelRequest['indices'],
  requeue = false,
): boolean {
  const folder = jobDir(dir, id);
  const req: CancelRequest = { indices, ...(requeue ? { requeue } : {}) };
  if (cancelHere(folder, req)) return true;
  const pid = Number(readState(dir, id)?.controller ?? readPid(folder));
  if (!(pid > 0) || !alive(pid)) return false;
  const name = `${Date.now()}-${process.pid}-${sequence++}.json`;
  writeJson(path.join(folder, 'requests', name), req);
  const ack = path.join(folder, 'acks', name);
  for (let waited = 0; waited < 10_000; waited += 10) {
    if (fs.existsSync(ack)) return true;
    if (!alive(pid)) return false;
    sleepSync(10);
  }
  return false;
}

function readPid(folder: string): string {
  try {
    return fs.readFileSync(path.join(folder, 'controller.pid'), 'utf8');
  } catch {
    return '';
  }
}
