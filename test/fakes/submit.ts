import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runController } from './controller.js';
import { type FakeJob, type JobState, jobDir, writeJson } from './state.js';

let controllersHere = false;

/**
 * Run the controllers of the jobs submitted from this process in it (the fake's server calls this: it lives as
 * long as its test, and a controller of its own costs no Node start) instead of in a process each.
 */
export function runControllersHere(): void {
  controllersHere = true;
}

/**
 * Put a submission into the FAKE queue: spool the batch script (a real scheduler copies it at submission, so
 * later edits do not change the job), write the job and its pending elements, and start the job's controller,
 * which runs the elements and ends when none is left: a detached process, or in this process after
 * runControllersHere.
 */
export function enqueue(dir: string, job: Omit<FakeJob, 'script'>, scriptSource: string): FakeJob {
  const folder = jobDir(dir, job.id);
  fs.mkdirSync(path.join(folder, 'requests'), { recursive: true });
  fs.mkdirSync(path.join(folder, 'acks'), { recursive: true });
  const script = path.join(folder, 'script');
  fs.copyFileSync(scriptSource, script);
  fs.chmodSync(script, 0o755);
  const full: FakeJob = { ...job, script };
  writeJson(path.join(folder, 'job.json'), full);
  const state: JobState = { elements: job.indices.map((index) => ({ index, state: 'pending' })) };
  writeJson(path.join(folder, 'state.json'), state);
  if (controllersHere) {
    runController(dir, job.id).catch((err: unknown) => {
      const why = err instanceof Error ? (err.stack ?? err.message) : String(err);
      fs.appendFileSync(path.join(folder, 'controller.log'), `FAKE controller: ${why}\n`);
    });
    return full;
  }
  const main = path.join(path.dirname(fileURLToPath(import.meta.url)), 'main.js');
  const log = fs.openSync(path.join(folder, 'controller.log'), 'a');
  const child = spawn(process.execPath, [main, 'controller', dir, String(job.id)], {
    detached: true,
    stdio: ['ignore', log, log],
    cwd: folder,
    env: process.env,
  });
  fs.closeSync(log);
  child.unref();
  fs.writeFileSync(path.join(folder, 'controller.pid'), String(child.pid));
  return full;
}
