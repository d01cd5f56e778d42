import fs from 'node:fs';
import path from 'node:path';
import { directArgv } from './command.js';
import type { GroupTask, RunSettings } from './group.js';
import { programSettings } from './program-settings.js';
import { writeProgram } from './programs.js';

/**
 * The single-task runner (programs/single.pl) for array elements that hold one task: the files it reads and its
 * settings.
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
  writeProgram('single.pl', script);
  return { table, script };
}

/** The variables that carry a launch's settings to the single-task runner (its environment). */
export function singleEnv(settings: RunSettings): Record<string, string> {
  return programSettings(settings);
}
