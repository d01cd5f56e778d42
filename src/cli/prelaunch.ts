import fs from 'node:fs';
import type { Command } from 'commander';
import { DroverError, usageError } from '../errors.js';
import { batchesOf, prelaunchJob } from '../launch/prelaunch.js';
import { describeChanges } from '../ledger/job-sync.js';
import {
  commandsOfText,
  parsePrelaunchArgs,
  planSweep,
  prelaunchRequest,
  unknownTagArgs,
} from '../sweep/index.js';
import { EXAMPLES } from './examples.js';
import { note } from './output.js';
import { prelaunchWordLines } from './prelaunch-words.js';
import { self } from './self.js';
import { cellText } from './table.js';
import { openWorkspace } from './workspace.js';

/** prelaunch's help, in the layout commander gives every other command's (its words are not commander's). */
const HELP = `Usage: drover prelaunch +command CMD +jobname NAME [+arg NAME VALUE...] [word...]
       drover prelaunch +commands-file FILE +jobname NAME [word...]

make a job from a sweep, in onager's grammar, and write its jobfile (.drover/jobs/<job>/jobs.json)

Words:
${prelaunchWordLines()}

Examples:
${EXAMPLES.prelaunch!.map((e) => `  ${e}`).join('\n')}
`;

/** Register `drover prelaunch`. */
export function registerPrelaunch(program: Command): void {
  program
    .command('prelaunch')
    .description('make a job from a sweep (onager’s +command +jobname +arg ... grammar)')
    .usage('+command CMD +jobname NAME [word...]  |  +commands-file FILE +jobname NAME [word...]')
    .helpOption(false)
    .allowUnknownOption()
    .allowExcessArguments()
    .argument('[words...]', 'the sweep, in onager’s + grammar (see drover prelaunch --help)')
    .action((words: string[]) => {
      const asks = prelaunchRequest(words);
      if (asks === 'help') process.stdout.write(HELP);
      else if (asks === 'version') process.stdout.write(`${self.version}\n`);
      else prelaunch(words);
    });
}

function prelaunch(words: string[]): void {
  const spec = parsePrelaunchArgs(words);
  // A file of commands is read and checked before anything is opened or written.
  const commands =
    spec.commandsFile !== undefined
      ? {
          tasks: commandsOfText(readCommandsFile(spec.commandsFile), shownFile(spec.commandsFile)),
          shown: shownFile(spec.commandsFile),
        }
      : undefined;
  // A sweep too big for a job is refused before anything is opened or written (counted, not made); with
  // +append it is counted again after the job's ids once the jobfile is read.
  if (!commands) planSweep(spec);
  for (const name of unknownTagArgs(spec))
    note(`drover: warning: +tag-args ${name} is not one of the +arg names`);
  const ws = openWorkspace();
  const { fresh, total, changes } = prelaunchJob(ws, spec, {
    ...(commands ? { commands } : {}),
    argv: process.argv.slice(2),
    warn: note,
  });
  if (!spec.quiet) for (const b of batchesOf(fresh)) process.stdout.write(`${b.commands.join('\n')}\n`);
  process.stdout.write(`Prelaunched ${total} jobs for ${spec.jobname}.\n`);
  const line = describeChanges(spec.jobname, changes);
  if (line !== undefined) note(`drover: ${line}`);
}

/** The largest commands file read (a million commands of 1,000 characters). */
const MAX_COMMANDS_FILE_BYTES = 1 << 30;

/** How a commands file is named in messages. */
function shownFile(file: string): string {
  return file === '-' ? '(standard input)' : `'${cellText(file)}'`;
}

/** The text of `+commands-file FILE` (`-`: standard input), or one line saying why it cannot be read. */
function readCommandsFile(file: string): string {
  const shown = shownFile(file);
  let bytes: Buffer;
  try {
    if (file === '-') {
      if (process.stdin.isTTY)
        throw usageError('+commands-file - reads standard input, which is a terminal: pipe the commands in');
      bytes = fs.readFileSync(0);
    } else {
      const size = fs.statSync(file).size;
      if (size > MAX_COMMANDS_FILE_BYTES)
        throw usageError(
          `+commands-file ${shown} has ${size} bytes, more than ${MAX_COMMANDS_FILE_BYTES}: split it`,
        );
      bytes = fs.readFileSync(file);
    }
  } catch (err) {
    if (err instanceof DroverError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EISDIR'
          ? 'is a folder'
          : code === 'EACCES'
            ? 'cannot be read (permission denied)'
            : `cannot be read (${code ?? String(err)})`;
    throw usageError(`+commands-file ${shown}: ${why}; give a file of commands, one per line`);
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw usageError(`+commands-file ${shown} is not UTF-8 text: give a text file of commands, one per line`);
  }
}
