import fs from 'node:fs';
import type { Command } from 'commander';
import { LAUNCH_BACKENDS } from '../backends/registry.js';
import { usageError } from '../errors.js';
import { listJobs } from '../ledger/jobs.js';
import { Ledger } from '../ledger/ledger.js';
import { droverPaths } from '../paths.js';
import { STATES } from '../protocol/states.js';
import { type CommandNode, cliTree } from './cli-tree.js';
import { bashScript, type Choices, fishScript, zshScript } from './completion-scripts.js';
import { PRELAUNCH_WORDS } from './prelaunch-words.js';
import { cellText } from './table.js';
import { handMadeJobs } from './workspace.js';

const SHELLS = { bash: bashScript, zsh: zshScript, fish: fishScript } as const;

/** Values the command line's options take, where they are a closed set. */
export const CHOICES: Choices = { '--backend': LAUNCH_BACKENDS, '--state': STATES };

/** The command line of `program` as data, prelaunch's + words included. */
export function droverTree(program: Command): CommandNode {
  return cliTree(program, { prelaunch: PRELAUNCH_WORDS });
}

/** Register `drover completion`. */
export function registerCompletion(program: Command): void {
  program
    .command('completion')
    .description('print a shell completion script: commands, options, and job names from the ledger')
    .argument('[shell]', `the shell: ${Object.keys(SHELLS).join(', ')}`)
    .option('--jobs', 'print the job names of this folder, one per line (what the scripts complete with)')
    .action((shell: string | undefined, opts: { jobs?: boolean }) => {
      if (opts.jobs) {
        if (shell !== undefined) throw usageError(`completion: give a shell or --jobs, not both`);
        process.stdout.write(
          jobNames()
            .map((n) => `${n}\n`)
            .join(''),
        );
        return;
      }
      if (shell === undefined)
        throw usageError(`completion needs a shell: ${Object.keys(SHELLS).join(', ')}`);
      if (!Object.hasOwn(SHELLS, shell))
        throw usageError(
          `completion: '${cellText(shell)}' is not a shell drover completes: use ${Object.keys(SHELLS).join(', ')}`,
        );
      process.stdout.write(SHELLS[shell as keyof typeof SHELLS](droverTree(program), CHOICES));
    });
}

/** This folder's jobs, for completion: never creates or changes anything, and never fails. */
function jobNames(): string[] {
  const paths = droverPaths();
  const names = new Set<string>();
  try {
    if (fs.existsSync(paths.ledger)) {
      const ledger = Ledger.openForReading(paths);
      try {
        for (const j of listJobs(ledger)) names.add(j.name);
      } finally {
        ledger.close();
      }
    }
  } catch {
    // A damaged or locked ledger: complete with the jobfiles alone.
  }
  for (const n of handMadeJobs(paths)) names.add(n);
  return [...names].sort();
}
