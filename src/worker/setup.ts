import { spawn } from 'node:child_process';
import os from 'node:os';

/** A worker's setup command, running. */
export interface RunningSetup {
  /** Its exit code (128 + signal number when a signal ended it; 127 when it could not start). */
  done: Promise<number>;
  /** Stop it and what it started (its process group): SIGTERM, then SIGKILL after `graceMs`. */
  stop(graceMs?: number): void;
}

/** Run a worker's setup command (`/bin/sh -c`) in a process group of its own, so stopping it stops all of it. */
export function startSetup(cmd: string): RunningSetup {
  const child = spawn('/bin/sh', ['-c', cmd], { stdio: ['ignore', 'inherit', 'inherit'], detached: true });
  let ended = false;
  const done = new Promise<number>((resolve) => {
    child.on('error', () => {
      ended = true;
      resolve(127);
    });
    child.on('exit', (code, signal) => {
      ended = true;
      resolve(signal ? 128 + (os.constants.signals[signal] ?? 0) : (code ?? 1));
    });
  });
  const signal = (sig: NodeJS.Signals) => {
    if (ended || child.pid === undefined) return;
    try {
      process.kill(-child.pid, sig);
    } catch {
      // gone meanwhile
    }
  };
  return {
    done,
    stop(graceMs = 5000) {
      signal('SIGTERM');
      setTimeout(() => signal('SIGKILL'), graceMs).unref();
    },
  };
}
