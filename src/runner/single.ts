import fs from 'node:fs';
import path from 'node:path';
import { directArgv } from './command.js';
import type { GroupTask, RunSettings } from './group.js';
import { SINGLE_RUNNER_PERL } from './single-source.js';

/**
 * The single-task runner (single-source.ts) for array elements that hold one task: the files it reads and the
 * shell line that starts it.
 */

/** Escape a command for one line of the task table. */
function escapeCommand(command: string): string {
  return command.replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n');
}

/** Write `single-tasks.tsv` and `single-runner.pl` into the launch folder; returns their paths. */
export function writeSingleRunner(
  launchDir: string,
  groups: ReadonlyMap<number, GroupTask>,
): { table: string; script: string } {
  const table = path.join(launchDir, 'single-tasks.tsv');
  const script = path.join(launchDir, 'single-runner.pl');
  const lines: string[] = [];
  for (const [key, t] of groups) {
    const argv = directArgv(t.command);
    const payload = argv ? `x\t${argv.map(escapeCommand).join('\t')}` : `sh\t${escapeCommand(t.command)}`;
    lines.push(`${key}\t${t.id}\t${t.attempt}\t${payload}\n`);
  }
  fs.writeFileSync(table, lines.join(''));
  fs.writeFileSync(script, SINGLE_RUNNER_PERL);
  return { table, script };
}

/** The DROVER_S_* variables that carry a launch's settings to the single-task runner. */
export function singleEnv(settings: RunSettings): Record<string, string> {
  const env: Record<string, string> = {
    DROVER_S_JOB: settings.job,
    DROVER_S_LAUNCH: String(settings.launch),
    DROVER_S_LOG_DIR: settings.logDir,
    DROVER_S_RECORDS_DIR: settings.recordsDir,
    DROVER_S_CANCEL_DIR: settings.cancelDir,
    DROVER_S_CWD: settings.cwd,
    DROVER_S_RETRIES: String(settings.retries),
    DROVER_S_RETRY_DELAY: String(settings.retryDelay),
    DROVER_S_KILL_GRACE: String(settings.killGrace),
  };
  if (settings.taskTimeout !== undefined) env.DROVER_S_TASK_TIMEOUT = String(settings.taskTimeout);
  return env;
}
