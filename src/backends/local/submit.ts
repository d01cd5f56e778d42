import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Ledger } from '../../ledger/ledger.js';
import type { GroupFile } from '../../runner/group.js';
import { Runner, type RunnerSummary } from '../../runner/runner.js';
import { processStartTime, shortHostname } from '../../util/proc.js';
import type { RunObserver } from '../backend.js';
import type { LocalHandles } from './runner-handle.js';

/** Signals that stop a foreground launch: Ctrl-C, `kill`, and the terminal going away. */
const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/** The exit code of a process that stops because of `signal` (128 + its number, as shells report it). */
export function signalExitCode(signal: NodeJS.Signals): number {
  return 128 + (os.constants.signals[signal] ?? 15);
}

/** This process as the runner of a local launch: what a foreground launch records when it makes the launch. */
export function thisProcessHandles(): LocalHandles {
  return { host: shortHostname(), pid: process.pid, pid_start: processStartTime(process.pid) };
}

/**
 * Run a local launch in the foreground: this process is the runner. SIGINT, SIGTERM and SIGHUP cancel the
 * tasks (TERM, then KILL after the grace period) and they are recorded `cancelled`; a second signal kills them
 * at once (still recorded `cancelled`), a third exits without waiting for their records.
 */
export async function runForeground(
  groupFile: GroupFile,
  observer: RunObserver | undefined,
): Promise<{ summary: RunnerSummary; interrupted: NodeJS.Signals | null }> {
  // This process is the launch's runner, as src/launch recorded when it made the launch (initialHandles).
  let progress = observer;
  const runner = new Runner(groupFile, {
    onStart: () => progress?.started(),
    onEnd: (end) => progress?.ended(end),
  });
  let interrupted: NodeJS.Signals | null = null;
  let signals = 0;
  // A terminal that went away fails every write: no reason to stop the run over it.
  const ignore = () => {};
  process.stderr.on('error', ignore);
  const say = (text: string) => {
    try {
      process.stderr.write(text);
    } catch {
      // no terminal any more
    }
  };
  const onSignal = (sig: NodeJS.Signals) => {
    signals++;
    if (sig === 'SIGHUP') {
      progress?.detach();
      progress = undefined;
    }
    if (signals === 1) {
      interrupted = sig;
      say(`\ndrover: ${sig}: stopping the running tasks (again to kill them at once)\n`);
      runner.cancel('all');
    } else if (signals === 2) {
      say(`drover: ${sig}: killing the running tasks (again to quit without recording them)\n`);
      runner.abort();
    } else {
      process.exit(signalExitCode(interrupted ?? sig));
    }
  };
  const onUsr1 = () => runner.checkCancelRequests();
  for (const s of STOP_SIGNALS) process.on(s, onSignal);
  process.on('SIGUSR1', onUsr1);
  try {
    const summary = await runner.run();
    return { summary, interrupted };
  } finally {
    progress?.stop();
    for (const s of STOP_SIGNALS) process.off(s, onSignal);
    process.off('SIGUSR1', onUsr1);
    process.stderr.off('error', ignore);
  }
}

/**
 * Start the runner as a detached background process; returns its handles. Its own output goes to runner.log.
 * It starts its tasks only once the ledger knows it (`go` on its stdin): if this process dies before that, the
 * runner ends without running anything, so no task runs that the ledger cannot see.
 */
export function runDetached(
  ledger: Ledger,
  recordHandles: (handles: LocalHandles) => void,
  bin: string,
  groupPath: string,
  groupFile: GroupFile,
  launchDir: string,
): LocalHandles {
  const log = fs.openSync(path.join(launchDir, 'runner.log'), 'a');
  // The runner keeps the ledger current itself (it runs here, beside it): the first status after it has little
  // left to ingest.
  const argv = [bin, 'runner', groupPath, '--wait-for-go', '--ingest-into', ledger.paths.root];
  const child = spawn(process.execPath, argv, {
    detached: true,
    stdio: ['pipe', log, log],
    cwd: groupFile.cwd,
  });
  fs.closeSync(log);
  const handles: LocalHandles = {
    host: shortHostname(),
    pid: child.pid!,
    pid_start: processStartTime(child.pid!),
  };
  recordHandles(handles);
  child.stdin!.on('error', () => {});
  child.stdin!.end('go\n');
  child.unref();
  return handles;
}
