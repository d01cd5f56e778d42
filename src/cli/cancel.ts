import readline from 'node:readline/promises';
import type { Command } from 'commander';
import { refresh } from '../backends/refresh.js';
import { usageError } from '../errors.js';
import { applyCancel, cancelPlan } from '../launch/cancel.js';
import { loadJob } from '../launch/load-job.js';
import { recordHistory } from '../ledger/history.js';
import { jobNotFound } from '../ledger/jobs.js';
import { activeTaskIds } from '../ledger/launches.js';
import { validateJobname } from '../sweep/index.js';
import { condenseIds, parseBlocks, parseTasklist } from '../tasklist/tasklist.js';
import { SECONDS } from '../util/limits.js';
import { note, printJson } from './output.js';
import { durationOption } from './parse.js';
import { openExistingWorkspace } from './workspace.js';

interface CancelOptions {
  tasklist?: string;
  yes?: boolean;
  json?: boolean;
  wait: number;
}

/** Register `drover cancel`. */
export function registerCancel(program: Command): void {
  program
    .command('cancel')
    .description('stop a job’s queued and running tasks (all, or a tasklist); they are recorded cancelled')
    .argument('<job>', 'the job')
    .option('--tasklist <list>', 'only these tasks, e.g. 3-7,9')
    .option('-y, --yes', 'do not ask for confirmation')
    .option(
      '--wait <s>',
      'seconds to wait for the tasks to stop before returning',
      durationOption('--wait', SECONDS.wait),
      30,
    )
    .option('--json', 'print what was cancelled as JSON')
    .action(async (job: string, opts: CancelOptions) => {
      await cancel(job, opts, process.argv.slice(2));
    });
}

async function cancel(jobname: string, opts: CancelOptions, argv: readonly string[]): Promise<void> {
  validateJobname(jobname, 'job');
  if (opts.tasklist !== undefined) parseBlocks(opts.tasklist);
  const ws = openExistingWorkspace({ write: true });
  if (!ws) throw jobNotFound(jobname);
  const job = loadJob(ws, jobname, { report: note });
  // Not only the job's tasks now: a task whose command changed may still run its earlier one.
  const wanted =
    opts.tasklist !== undefined ? new Set(parseTasklist(opts.tasklist, job.max_task, job.name)) : undefined;
  refresh(ws.ledger, job.id);
  const plan = cancelPlan(ws.ledger, job.id, wanted);
  const ids = plan.flatMap((p) => p.ids);
  if (ids.length === 0) {
    if (opts.json) printJson({ jobname, cancelled: [] });
    else
      note(
        `drover: nothing to cancel: no queued or running tasks${opts.tasklist ? ` in ${opts.tasklist}` : ''} of '${jobname}'`,
      );
    return;
  }
  if (!opts.yes) {
    if (!process.stdin.isTTY)
      throw usageError(`cancel of ${ids.length} task(s) needs confirmation: add --yes`);
    const rl = readline.createInterface({ input: process.stdin, output: process.stderr });
    const answer = await rl.question(
      `Cancel ${ids.length} task(s) of '${jobname}' (${condenseIds(ids)})? [y/N] `,
    );
    rl.close();
    if (!/^y(es)?$/i.test(answer.trim())) {
      note('drover: nothing cancelled');
      return;
    }
  }
  recordHistory(ws.ledger, { kind: 'cancel', jobname, argv });
  applyCancel(ws.ledger, plan, wanted === undefined);
  const deadline = Date.now() + opts.wait * 1000;
  const target = new Set(ids);
  let left = ids.length;
  for (;;) {
    refresh(ws.ledger, job.id);
    left = activeTaskIds(ws.ledger, job.id, [...target]).length;
    if (left === 0 || Date.now() >= deadline) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  if (opts.json) printJson({ jobname, cancelled: ids, still_stopping: left });
  else {
    note(`drover: cancelled ${ids.length - left} task(s) of '${jobname}' (${condenseIds(ids)})`);
    if (left > 0)
      note(`drover: ${left} task(s) are still stopping; drover status ${jobname} shows when they have`);
  }
}
