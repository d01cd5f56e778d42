import type { Command } from 'commander';
import { refresh } from '../backends/refresh.js';
import { usageError } from '../errors.js';
import { loadJob } from '../launch/load-job.js';
import { type JobRow, jobNotFound, listJobs, resolveTasklist, taskJson } from '../ledger/jobs.js';
import type { Ledger } from '../ledger/ledger.js';
import { listTasks, taskJsonChunks } from '../ledger/queries.js';
import { STATES, type State } from '../ledger/states.js';
import { validateJobname } from '../sweep/index.js';
import { parseBlocks } from '../tasklist/tasklist.js';
import { listAttempts } from './list-attempts.js';
import { note, printJson, printTable } from './output.js';
import { openExistingWorkspace } from './workspace.js';

interface ListOptions {
  jobname?: string;
  tasklist?: string;
  state?: string;
  json?: boolean;
  attempts?: boolean;
}

/** Register `drover list`. */
export function registerList(program: Command): void {
  program
    .command('list [job]')
    .description('tasks with their command, tag, state, exit code and attempts')
    .option('--jobname <job>', 'only this job (default: every job); `drover list JOB` says the same')
    .option('--tasklist <list>', 'only these tasks (needs --jobname), e.g. 1-3,5')
    .option('--state <states>', `only tasks in these states, comma separated: ${STATES.join(', ')}`)
    .option(
      '--attempts',
      'every attempt instead of every task, with the command it ran (earlier commands too)',
    )
    .option('--json', 'print a JSON array, one object per task (per attempt with --attempts)')
    .action((job: string | undefined, opts: ListOptions) => {
      if (job !== undefined && opts.jobname !== undefined && job !== opts.jobname) {
        throw usageError(`list: job '${job}' and --jobname '${opts.jobname}' differ: give one of them`);
      }
      list(job === undefined ? opts : { ...opts, jobname: job });
    });
}

function parseStates(text: string): State[] {
  return text.split(',').map((s) => {
    const st = s.trim() as State;
    if (!STATES.includes(st)) throw usageError(`--state '${s}' is not a state: use ${STATES.join(', ')}`);
    return st;
  });
}

/**
 * `list --json`: the same array printJson prints (one object per line), written a chunk of tasks at a time, so
 * a 100,000-task job never holds all its rows, objects and text at once.
 */
function listJson(ledger: Ledger, jobs: JobRow[], opts: ListOptions, states: State[] | undefined): void {
  let first = true;
  for (const job of jobs) {
    refresh(ledger, job.id);
    const ids = opts.tasklist !== undefined ? resolveTasklist(ledger, job, opts.tasklist) : undefined;
    const filter = { ...(ids ? { ids } : {}), ...(states ? { states } : {}) };
    for (const lines of taskJsonChunks(ledger, job, filter, opts.jobname === undefined)) {
      process.stdout.write(`${first ? '[\n' : ',\n'}${lines}`);
      first = false;
    }
  }
  process.stdout.write(first ? '[]\n' : '\n]\n');
}

function list(opts: ListOptions): void {
  if (opts.tasklist !== undefined && opts.jobname === undefined)
    throw usageError('--tasklist needs --jobname');
  if (opts.jobname !== undefined) validateJobname(opts.jobname, '--jobname');
  if (opts.tasklist !== undefined) parseBlocks(opts.tasklist);
  const states = opts.state !== undefined ? parseStates(opts.state) : undefined;
  const ws = openExistingWorkspace();
  if (!ws) {
    if (opts.jobname !== undefined) throw jobNotFound(opts.jobname);
    if (opts.json) printJson([]);
    return;
  }
  const jobs =
    opts.jobname !== undefined
      ? [loadJob(ws, opts.jobname, { report: note })]
      : listJobs(ws.ledger).map((j) => loadJob(ws, j.name, { report: note }));
  if (opts.attempts) {
    if (states) throw usageError('--state filters tasks, not attempts: drop it with --attempts');
    for (const job of jobs) refresh(ws.ledger, job.id);
    listAttempts(
      ws.ledger,
      jobs,
      (job) => (opts.tasklist !== undefined ? resolveTasklist(ws.ledger, job, opts.tasklist) : undefined),
      opts.json === true,
    );
    return;
  }
  if (opts.json) {
    listJson(ws.ledger, jobs, opts, states);
    return;
  }
  const rows: Record<string, unknown>[] = [];
  for (const job of jobs) {
    refresh(ws.ledger, job.id);
    const ids = opts.tasklist !== undefined ? resolveTasklist(ws.ledger, job, opts.tasklist) : undefined;
    for (const t of listTasks(ws.ledger, job.id, {
      ...(ids ? { ids } : {}),
      ...(states ? { states } : {}),
    })) {
      rows.push({ ...(opts.jobname === undefined ? { jobname: job.name } : {}), ...taskJson(t) });
    }
  }
  printTable(
    ['job', 'task', 'state', 'exit', 'attempts', 'tag', 'command'],
    rows.map((r) => [
      (r.jobname as string | undefined) ?? opts.jobname!,
      r.task as number,
      r.state as string,
      r.exit_code === null ? '-' : String(r.exit_code),
      r.attempts as number,
      r.tag as string,
      r.command as string,
    ]),
  );
}
