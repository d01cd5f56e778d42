import type { Command } from 'commander';
import { refresh } from '../backends/refresh.js';
import { DroverError, usageError } from '../errors.js';
import { loadJob } from '../launch/load-job.js';
import { jobHasTask, jobNotFound } from '../ledger/jobs.js';
import { taskAttempt, taskNow } from '../ledger/queries.js';
import { placeOf } from '../protocol/log-slices.js';
import { validateJobname } from '../sweep/index.js';
import { parseInteger } from '../util/integer.js';
import { COUNTS, MAX_JOB_TASKS } from '../util/limits.js';
import { copyFrom, follow, followTask, printAllAttempts, sayIfLost } from './log-reading.js';
import { note } from './output.js';
import { intOption } from './parse.js';
import { openExistingWorkspace } from './workspace.js';

interface LogsOptions {
  err?: boolean;
  follow?: boolean;
  attempt?: number;
  path?: boolean;
  allAttempts?: boolean;
}

/** Register `drover logs`. */
export function registerLogs(program: Command): void {
  program
    .command('logs')
    .description('print a task’s output (its latest attempt unless --attempt)')
    .argument('<job>', 'the job')
    .argument('<task>', 'the task id')
    .option('--err', 'print stderr instead of stdout')
    .option(
      '-f, --follow',
      'keep printing as the task writes, until it ends: a queued task is waited for, and each retry followed in turn (unless --attempt)',
    )
    .option('--attempt <n>', 'this attempt instead of the latest', intOption('--attempt', COUNTS.attempt))
    .option('--path', 'print the log file’s path instead of its content')
    .option('--all-attempts', 'print every attempt’s output in turn, each after a line naming it')
    .action(async (job: string, task: string, opts: LogsOptions) => {
      await logs(job, task, opts);
    });
}

async function logs(jobname: string, taskText: string, opts: LogsOptions): Promise<void> {
  validateJobname(jobname, 'job');
  const taskId = parseInteger(taskText, 'task', { min: 1, max: MAX_JOB_TASKS, unit: '' });
  const ws = openExistingWorkspace();
  if (!ws) throw jobNotFound(jobname);
  const job = loadJob(ws, jobname, { report: note });
  if (!jobHasTask(ws.ledger, job.id, taskId))
    throw usageError(`task ${taskId} is not in job '${jobname}': see drover list ${jobname} for its tasks`);
  refresh(ws.ledger, job.id);
  if (opts.allAttempts) {
    const alone = opts.follow
      ? '--follow'
      : opts.attempt !== undefined
        ? '--attempt'
        : opts.path
          ? '--path'
          : null;
    if (alone)
      throw usageError(
        `--all-attempts prints every attempt as it is now: drop ${alone}, or drop --all-attempts to ${alone === '--follow' ? 'follow the latest' : 'name one'}`,
      );
    await printAllAttempts(ws, jobname, job.id, taskId, opts.err ? 'err' : 'out');
    return;
  }
  if (opts.follow && opts.attempt === undefined && !opts.path) {
    const followed = await followTask(ws, jobname, job.id, taskId, opts.err === true);
    if (followed === 'never started') {
      const { state } = taskNow(ws.ledger, job.id, taskId);
      note(
        `drover: task ${taskId} of '${jobname}' ended ${state} without starting: see drover status ${jobname}`,
      );
      process.exitCode = 1;
      return;
    }
    if (followed !== 'nothing') {
      sayIfLost(ws, jobname, job.id, taskId, followed);
      return;
    }
  }
  const a = taskAttempt(ws.ledger, job.id, taskId, opts.attempt);
  if (!a) {
    const what = opts.attempt !== undefined ? `attempt ${opts.attempt}` : 'no attempt yet';
    throw new DroverError(
      'not-found',
      `task ${taskId} of '${jobname}' has ${what === 'no attempt yet' ? what : `no ${what}`}: see drover list --jobname ${jobname}`,
    );
  }
  const stream = opts.err ? 'err' : 'out';
  const place = placeOf(a, stream);
  if (!place.path)
    throw new DroverError('not-found', `task ${taskId} attempt ${a.attempt} has no log file recorded`);
  if (opts.path) {
    process.stdout.write(`${place.path}\n`);
    if (place.off !== null) {
      const till = place.end !== null ? `${place.end}` : 'its end (it runs)';
      note(
        `drover: that file is its slot's segment: the attempt's ${opts.err ? 'stderr' : 'stdout'} is its bytes from ${place.off} to ${till} (drover logs prints just those; launch with --logs files for a file per attempt)`,
      );
    }
    return;
  }
  if (!opts.follow) {
    const copied = await copyFrom(place, stream, 0);
    if (copied === 'missing') {
      throw new DroverError(
        'not-found',
        `log file ${place.path} is gone (removed, or on a node's local disk)`,
      );
    }
    return;
  }
  await follow(ws, job.id, taskId, a.attempt, stream);
  sayIfLost(ws, jobname, job.id, taskId, a.attempt);
}
