import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { refresh } from '../backends/refresh.js';
import { usageError } from '../errors.js';
import { jobfileStamp } from '../launch/load-job.js';
import { recordHistory } from '../ledger/history.js';
import { describeChanges, findJob, syncJobTasks } from '../ledger/jobs.js';
import { openLaunches } from '../ledger/launches.js';
import type { Ledger } from '../ledger/ledger.js';
import {
  addTasks,
  expandSweep,
  jobfilePath,
  nextTaskId,
  PRELAUNCH_USAGE,
  parsePrelaunchArgs,
  prelaunchRequest,
  readJobfile,
  serializeJobfile,
  unknownTagArgs,
  writeJobfileAtomic,
} from '../sweep/index.js';
import { EXAMPLES } from './examples.js';
import { note } from './output.js';
import { prelaunchWordLines } from './prelaunch-words.js';
import { self } from './self.js';
import { openWorkspace } from './workspace.js';

const HELP = `Make a job from a sweep, in onager's grammar, and write its jobfile (.drover/jobs/<job>/jobs.json).

${PRELAUNCH_USAGE}

${prelaunchWordLines()}

Examples:
${EXAMPLES.prelaunch!.map((e) => `  ${e}`).join('\n')}
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
      const asks = prelaunchRequest(words);
      if (asks === 'help') process.stdout.write(HELP);
      else if (asks === 'version') process.stdout.write(`${self.version}\n`);
      else prelaunch(words);
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
  const known = findJob(ws.ledger, spec.jobname);
  // Fresh states first: a launch that has ended since is not in the way.
  if (known) refresh(ws.ledger, known.id);
  // The ledger's write lock makes the read-modify-write of the jobfile atomic against concurrent prelaunches;
  // if the ledger then cannot take the change, the jobfile goes back to what it was (nothing half-written).
  const undo = new JobfileUndo(jobfile);
  const { tasks, total, changes } = undo.around(() =>
    ws.ledger.write(() => {
      if (!spec.append) refuseWhileLaunched(ws.ledger, spec.jobname);
      const existing = spec.append ? readJobfile(jobfile) : new Map();
      const tasks = expandSweep(spec, { startId: nextTaskId(existing) });
      const entries = addTasks(existing, tasks);
      fs.mkdirSync(path.dirname(jobfile), { recursive: true });
      undo.keep();
      writeJobfileAtomic(jobfile, serializeJobfile(entries));
      const { changes } = syncJobTasks(
        ws.ledger,
        spec.jobname,
        jobfile,
        entries,
        jobfileStamp(jobfile) ?? null,
      );
      recordHistory(ws.ledger, { kind: 'prelaunch', jobname: spec.jobname, argv: process.argv.slice(2) });
      return { tasks, total: entries.size, changes };
    }),
  );
  if (!spec.quiet) process.stdout.write(tasks.map((t) => `${t.command}\n`).join(''));
  process.stdout.write(`Prelaunched ${total} jobs for ${spec.jobname}.\n`);
  const line = describeChanges(spec.jobname, changes);
  if (line !== undefined) note(`drover: ${line}`);
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
