import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Progress } from '../../cli/progress.js';
import { self } from '../../cli/self.js';
import { setLaunchHandles } from '../../ledger/launches.js';
import type { Ledger } from '../../ledger/ledger.js';
import type { GroupFile } from '../../runner/group.js';
import { processStartTime, shortHostname } from '../../runner/proc.js';
import { Runner, type RunnerSummary } from '../../runner/runner.js';
import type { LocalHandles } from './local.js';

/**
 * Run a local launch in the foreground: this process is the runner. SIGINT/SIGTERM cancel the tasks (TERM,
 * then KILL after the grace period) and they are recorded `cancelled`; a second signal exits at once.
 */
export async function runForeground(
  ledger: Ledger,
  groupFile: GroupFile,
  options: { progress: boolean },
): Promise<{ summary: RunnerSummary; interrupted: NodeJS.Signals | null }> {
  const handles: LocalHandles = {
    host: shortHostname(),
    pid: process.pid,
    pid_start: processStartTime(process.pid),
  };
  setLaunchHandles(ledger, groupFile.launch, handles);
  const progress = options.progress ? new Progress(groupFile.tasks.length, groupFile.job) : undefined;
  const runner = new Runner(groupFile, {
    onStart: () => progress?.started(),
    onEnd: (task, attempt, state, exitCode, willRetry) =>
      progress?.ended(task, attempt, state, exitCode, willRetry),
  });
  let interrupted: NodeJS.Signals | null = null;
  const onSignal = (sig: NodeJS.Signals) => {
    if (interrupted) process.exit(128 + (sig === 'SIGINT' ? 2 : 15));
    interrupted = sig;
    process.stderr.write(`\ndrover: ${sig}: stopping the running tasks (again to quit at once)\n`);
    runner.cancel('all');
  };
  const onUsr1 = () => runner.checkCancelRequests();
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('SIGUSR1', onUsr1);
  try {
    const summary = await runner.run();
    return { summary, interrupted };
  } finally {
    progress?.stop();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    process.off('SIGUSR1', onUsr1);
  }
}

/** Start the runner as a detached background process; returns its handles. Its own output goes to runner.log. */
export function runDetached(
  ledger: Ledger,
  groupPath: string,
  groupFile: GroupFile,
  launchDir: string,
): LocalHandles {
  const log = fs.openSync(path.join(launchDir, 'runner.log'), 'a');
  const child = spawn(process.execPath, [self.bin, 'runner', groupPath], {
    detached: true,
    stdio: ['ignore', log, log],
    cwd: groupFile.cwd,
  });
  fs.closeSync(log);
  child.unref();
  const handles: LocalHandles = {
    host: shortHostname(),
    pid: child.pid!,
    pid_start: processStartTime(child.pid!),
  };
  setLaunchHandles(ledger, groupFile.launch, handles);
  return handles;
}
