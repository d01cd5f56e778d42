import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { refresh } from '../backends/refresh.js';
import { DroverError, usageError } from '../errors.js';
import { jobStamp } from '../launch/load-job.js';
import { recordHistory } from '../ledger/history.js';
import { describeChanges, findJob, syncJobTasks } from '../ledger/jobs.js';
import { openLaunches } from '../ledger/launches.js';
import type { Ledger } from '../ledger/ledger.js';
import {
  addTasks,
  commandsOfText,
  expandSweep,
  jobfilePath,
  nextTaskId,
  type ParamsRecord,
  PRELAUNCH_USAGE,
  paramsFileLimit,
  paramsFilePath,
  paramsOfEntries,
  parsePrelaunchArgs,
  prelaunchRequest,
  readJobfile,
  readParamsFile,
  type SweepTask,
  serializeJobfile,
  serializeParamsFile,
  unknownTagArgs,
  writeJobfileAtomic,
} from '../sweep/index.js';
import { MAX_JOB_TASKS } from '../util/limits.js';
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
  const fromFile =
    spec.commandsFile !== undefined
      ? commandsOfText(readCommandsFile(spec.commandsFile), shownFile(spec.commandsFile))
      : undefined;
  for (const name of unknownTagArgs(spec))
    note(`drover: warning: +tag-args ${name} is not one of the +arg names`);
  const ws = openWorkspace();
  const jobfile =
    spec.jobfile !== undefined
      ? path.resolve(jobfilePath(spec.jobfile, spec.jobname))
      : ws.paths.jobfile(spec.jobname);
  const known = findJob(ws.ledger, spec.jobname);
  // Fresh states first: a launch that has ended since is not in the way.
  if (known) refresh(ws.ledger, known.id);
  // The ledger's write lock makes the read-modify-write of the jobfile atomic against concurrent prelaunches;
  // if the ledger then cannot take the change, the jobfile goes back to what it was (nothing half-written).
  // The params file is written the same way, under the same lock, and put back with the jobfile.
  const paramsFile = paramsFilePath(jobfile);
  const undo = new JobfileUndo(jobfile);
  const undoParams = new JobfileUndo(paramsFile);
  const { tasks, total, changes } = undo.around(() =>
    undoParams.around(() =>
      ws.ledger.write(() => {
        if (!spec.append) refuseWhileLaunched(ws.ledger, spec.jobname);
        const existing = spec.append ? readJobfile(jobfile) : new Map();
        const tasks = fromFile
          ? renumber(fromFile, nextTaskId(existing), shownFile(spec.commandsFile!))
          : expandSweep(spec, { startId: nextTaskId(existing) });
        const entries = addTasks(existing, tasks);
        const records = spec.append ? existingParams(jobfile, paramsFile) : new Map<number, ParamsRecord>();
        for (const t of tasks) records.set(t.id, { command: t.command, params: t.params });
        fs.mkdirSync(path.dirname(jobfile), { recursive: true });
        undo.keep();
        undoParams.keep();
        writeJobfileAtomic(paramsFile, serializeParamsFile(records));
        writeJobfileAtomic(jobfile, serializeJobfile(entries));
        const { changes } = syncJobTasks(
          ws.ledger,
          spec.jobname,
          jobfile,
          paramsOfEntries(entries, records),
          jobStamp(jobfile) ?? null,
        );
        recordHistory(ws.ledger, { kind: 'prelaunch', jobname: spec.jobname, argv: process.argv.slice(2) });
        return { tasks, total: entries.size, changes };
      }),
    ),
  );
  if (!spec.quiet) process.stdout.write(tasks.map((t) => `${t.command}\n`).join(''));
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

/** The file's tasks numbered from `startId` (after the job's tasks, with +append). */
function renumber(tasks: SweepTask[], startId: number, shown: string): SweepTask[] {
  if (startId + tasks.length - 1 > MAX_JOB_TASKS)
    throw usageError(
      `+commands-file ${shown} would give the job more tasks than it may have (${MAX_JOB_TASKS})`,
    );
  return tasks.map((t, i) => ({ ...t, id: startId + i }));
}

/** The params file's records before `+append` adds to it; a damaged one is dropped with a warning. */
function existingParams(jobfile: string, paramsFile: string): Map<number, ParamsRecord> {
  const read = readParamsFile(paramsFile, paramsFileLimit(fs.statSync(jobfile).size));
  if (read.problem !== undefined)
    note(`drover: warning: ${paramsFile} ${read.problem}; the earlier tasks' params are dropped from it`);
  return read.records;
}

/**
 * A job that a launch may still run cannot get new commands: the running attempts would be history of a command
 * the jobfile no longer has, and their tasks could be launched again while they run. `+append` only adds tasks.
 */
function refuseWhileLaunched(ledger: Ledger, jobname: string): void {
  const job = findJob(ledger, jobname);
  if (!job) return;
  const open = openLaunches(ledger, job.id);
  if (open.length === 0) return;
  const ids = open.map((l) => l.id).join(', ');
  throw usageError(
    `job '${jobname}' has tasks queued or running (launch ${ids}): wait for them or cancel them (drover cancel ${jobname}) before prelaunching it again, or add tasks with +append`,
  );
}

/**
 * The jobfile as it was before a prelaunch rewrote it, kept as a hard link (no data written, so it works on a
 * full disk too) until the ledger has committed the change; put back if it did not.
 */
class JobfileUndo {
  private backup: string | null | undefined;
  constructor(private readonly file: string) {}

  /** Keep the current jobfile (or remember there was none) before it is replaced. */
  keep(): void {
    const backup = `${this.file}.${process.pid}.undo`;
    try {
      fs.linkSync(this.file, backup);
      this.backup = backup;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      this.backup = null;
    }
  }

  /** Run `fn`; when it throws after keep(), put the old jobfile back (or remove the new one) and rethrow. */
  around<T>(fn: () => T): T {
    try {
      const result = fn();
      if (this.backup) fs.rmSync(this.backup, { force: true });
      return result;
    } catch (err) {
      if (this.backup) fs.renameSync(this.backup, this.file);
      else if (this.backup === null) fs.rmSync(this.file, { force: true });
      throw err;
    }
  }
}
