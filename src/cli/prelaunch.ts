import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { recordHistory } from '../ledger/history.js';
import { syncJobTasks } from '../ledger/jobs.js';
import {
  addTasks,
  expandSweep,
  jobfilePath,
  nextTaskId,
  PRELAUNCH_USAGE,
  parsePrelaunchArgs,
  readJobfile,
  serializeJobfile,
  unknownTagArgs,
  wantsPrelaunchHelp,
  writeJobfileAtomic,
} from '../sweep/index.js';
import { note } from './output.js';
import { openWorkspace } from './workspace.js';

const HELP = `Make a job from a sweep, in onager's grammar, and write its jobfile (.drover/jobs/<job>/jobs.json).

${PRELAUNCH_USAGE}

  +command CMD          the base command of every task
  +jobname NAME         the job's name (letters, digits, _ - . +)
  +arg NAME [VALUE...]  an option and its values; several +arg make a grid (earlier ones vary fastest)
  +pos-arg VALUE...     a positional argument and its values
  +flag FLAG            a flag, on and off
  +tag [ARG]            pass each task a tag (default option --tag) made of the jobname, number and values
  +tag-args NAME...     only these +arg names go into the tag
  +no-tag-number        leave the task number out of tags
  +arg-mode MODE        argparse (--lr 0.1, default) or hydra (lr=0.1)
  +jobfile PATH         write the jobfile here ({jobname} is replaced)
  +append, +a           add the tasks to the job's existing jobfile
  +quiet, +q            do not print the commands

Example:
  drover prelaunch +command 'python train.py' +jobname lr +arg --lr 0.1 0.01 +arg --seed 1 2 +tag
`;

/** Register `drover prelaunch`. */
export function registerPrelaunch(program: Command): void {
  program
    .command('prelaunch')
    .description('make a job from a sweep (onager’s +command +jobname +arg ... grammar)')
    .helpOption(false)
    .allowUnknownOption()
    .allowExcessArguments()
    .argument('[words...]', 'the sweep, in onager’s + grammar (see drover prelaunch --help)')
    .action((words: string[]) => {
      if (words.includes('--help') || words.includes('-h') || wantsPrelaunchHelp(words)) {
        process.stdout.write(HELP);
        return;
      }
      prelaunch(words);
    });
}

function prelaunch(words: string[]): void {
  const spec = parsePrelaunchArgs(words);
  for (const name of unknownTagArgs(spec))
    note(`drover: warning: +tag-args ${name} is not one of the +arg names`);
  const ws = openWorkspace();
  const jobfile =
    spec.jobfile !== undefined
      ? path.resolve(jobfilePath(spec.jobfile, spec.jobname))
      : ws.paths.jobfile(spec.jobname);
  // The ledger's write lock makes the read-modify-write of the jobfile atomic against concurrent prelaunches.
  const { tasks, total } = ws.ledger.write(() => {
    const existing = spec.append ? readJobfile(jobfile) : new Map();
    const tasks = expandSweep(spec, { startId: nextTaskId(existing) });
    const entries = addTasks(existing, tasks);
    fs.mkdirSync(path.dirname(jobfile), { recursive: true });
    writeJobfileAtomic(jobfile, serializeJobfile(entries));
    syncJobTasks(ws.ledger, spec.jobname, jobfile, entries, fs.statSync(jobfile).mtimeMs);
    recordHistory(ws.ledger, { kind: 'prelaunch', jobname: spec.jobname, argv: process.argv.slice(2) });
    return { tasks, total: entries.size };
  });
  if (!spec.quiet) process.stdout.write(tasks.map((t) => `${t.command}\n`).join(''));
  process.stdout.write(`Prelaunched ${total} jobs for ${spec.jobname}.\n`);
}
