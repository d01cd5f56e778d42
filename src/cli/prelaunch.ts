import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { refresh } from '../backends/refresh.js';
import { DroverError, usageError } from '../errors.js';
import { jobStamp } from '../launch/load-job.js';
import { recordHistory } from '../ledger/history.js';
import { describeChanges, findJob, type JobChanges, JobSync } from '../ledger/jobs.js';
import { openLaunches } from '../ledger/launches.js';
import type { Ledger } from '../ledger/ledger.js';
import {
  BATCH_SIZE,
  batchesOfTasks,
  commandsOfText,
  emptyBatch,
  type JobEntry,
  JobfileWriter,
  jobfilePath,
  nextTaskId,
  ParamsFileWriter,
  type ParamsRecord,
  paramsFileLimit,
  paramsFilePath,
  paramsOfEntries,
  parsePrelaunchArgs,
  planSweep,
  prelaunchRequest,
  readJobfile,
  readParamsFile,
  SweepFilesWorker,
  type SweepPlan,
  type SweepTask,
  type TaskBatch,
  unknownTagArgs,
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
  // A sweep too big for a job is refused before anything is opened or written (counted, not made); with
  // +append it is counted again after the job's ids once the jobfile is read.
  if (!fromFile) planSweep(spec);
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
  const { fresh, total, changes } = undo.around(() =>
    undoParams.around(() =>
      ws.ledger.writeUnchecked(() => {
        if (!spec.append) refuseWhileLaunched(ws.ledger, spec.jobname);
        const existing = spec.append ? readJobfile(jobfile) : new Map<number, JobEntry>();
        const startId = nextTaskId(existing);
        const fresh = fromFile
          ? renumber(fromFile, startId, shownFile(spec.commandsFile!))
          : planSweep(spec, { startId });
        const records = spec.append ? existingParams(jobfile, paramsFile) : new Map<number, ParamsRecord>();
        fs.mkdirSync(path.dirname(jobfile), { recursive: true });
        undo.keep();
        undoParams.keep();
        const changes = writeJob(ws.ledger, spec.jobname, { jobfile, paramsFile, existing, records, fresh });
        recordHistory(ws.ledger, { kind: 'prelaunch', jobname: spec.jobname, argv: process.argv.slice(2) });
        return { fresh, total: existing.size + taskCount(fresh), changes };
      }),
    ),
  );
  if (!spec.quiet) for (const b of batchesOf(fresh)) process.stdout.write(`${b.commands.join('\n')}\n`);
  process.stdout.write(`Prelaunched ${total} jobs for ${spec.jobname}.\n`);
  const line = describeChanges(spec.jobname, changes);
  if (line !== undefined) note(`drover: ${line}`);
}

/**
 * From this many new tasks a sweep's files are written by a worker thread (SweepFilesWorker), in parallel with
 * the ledger; below it, starting the thread costs more than it saves.
 */
const WORKER_MIN_TASKS = 8192;

/** What a prelaunch writes: the job's files, the tasks it keeps (+append) and its new ones. */
interface JobWrite {
  jobfile: string;
  paramsFile: string;
  /** The jobfile's entries before (+append), in its order. */
  existing: ReadonlyMap<number, JobEntry>;
  /** The params file's records before (+append). */
  records: ReadonlyMap<number, ParamsRecord>;
  /** The new tasks: a planned sweep, or a commands file's. */
  fresh: SweepPlan | SweepTask[];
}

/** The new tasks, a batch at a time. */
function batchesOf(fresh: SweepPlan | SweepTask[]): Iterable<TaskBatch> {
  return Array.isArray(fresh) ? batchesOfTasks(fresh) : fresh.batches();
}

function taskCount(fresh: SweepPlan | SweepTask[]): number {
  return Array.isArray(fresh) ? fresh.length : fresh.count;
}

/**
 * Write the job's params file and jobfile (each replaced atomically, params first) and sync the ledger's tasks,
 * streaming the new tasks through all three a batch at a time: a sweep of a million tasks takes the memory of
 * one batch; from WORKER_MIN_TASKS new tasks of a sweep, a worker thread writes the files while this thread
 * fills the ledger. Runs inside the ledger's write transaction; a failure before the files are renamed leaves
 * both as they were.
 */
function writeJob(ledger: Ledger, jobname: string, w: JobWrite): JobChanges {
  const first = nextTaskId(w.existing);
  const last = first + taskCount(w.fresh) - 1;
  const params = new ParamsFileWriter(w.paramsFile);
  let job: JobfileWriter | undefined;
  try {
    job = new JobfileWriter(w.jobfile);
    const sync = new JobSync(ledger, jobname, { bulk: taskCount(w.fresh) >= WORKER_MIN_TASKS });
    // The earlier records (+append), but those of the ids the new tasks take: theirs are the new tasks'.
    for (const [id, r] of w.records)
      if (id < first || id > last) params.add(id, r.command, JSON.stringify(r.params));
    for (const b of existingBatches(w.existing, w.records)) {
      job.addBatch(b);
      sync.add(b);
    }
    if (!Array.isArray(w.fresh) && w.fresh.count >= WORKER_MIN_TASKS) {
      // A big sweep: a worker thread writes both files from the sweep while this one fills the ledger.
      const files = new SweepFilesWorker(w.fresh, {
        jobfile: job,
        paramsFile: params,
        paths: { jobfile: w.jobfile, paramsFile: w.paramsFile },
      });
      try {
        for (const b of w.fresh.batches()) sync.add(b);
        files.finish();
      } catch (err) {
        files.stop();
        throw err;
      }
    } else {
      for (const b of batchesOf(w.fresh)) {
        params.addBatch(b);
        job.addBatch(b);
        sync.add(b);
      }
    }
    params.commit();
    job.commit();
    return sync.finish(w.jobfile, jobStamp(w.jobfile) ?? null).changes;
  } catch (err) {
    params.abort();
    job?.abort();
    throw err;
  }
}

/** The jobfile's earlier entries, in its order, each with the params recorded for its command (none otherwise). */
function* existingBatches(
  existing: ReadonlyMap<number, JobEntry>,
  records: ReadonlyMap<number, ParamsRecord>,
): Generator<TaskBatch> {
  let batch = emptyBatch();
  for (const [id, e] of paramsOfEntries(existing, records)) {
    batch.ids.push(id);
    batch.commands.push(e.command);
    batch.tags.push(e.tag);
    batch.params.push(e.params);
    if (batch.ids.length === BATCH_SIZE) {
      yield batch;
      batch = emptyBatch();
    }
  }
  if (batch.ids.length > 0) yield batch;
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
      if (this.backup) {
        fs.renameSync(this.backup, this.file);
        // rename(2) does nothing when both names are links to one file (the jobfile was not replaced yet).
        fs.rmSync(this.backup, { force: true });
      } else if (this.backup === null) fs.rmSync(this.file, { force: true });
      throw err;
    }
  }
}
