import type { Command } from 'commander';
import { refresh } from '../backends/refresh.js';
import { usageError } from '../errors.js';
import { loadJob } from '../launch/load-job.js';
import { type JobRow, jobNotFound, listJobs, resolveTasklist } from '../ledger/jobs.js';
import type { Ledger } from '../ledger/ledger.js';
import { taskJsonChunks } from '../ledger/task-json.js';
import { STATES, type State } from '../protocol/states.js';
import { validateJobname } from '../sweep/index.js';
import { parseBlocks } from '../tasklist/tasklist.js';
import { listAttempts } from './list-attempts.js';
import { DEFAULT_COLUMNS, LIST_COLUMNS, type ListColumn, parseColumns } from './list-columns.js';
import {
  checkJoblogPath,
  EXPORT_COLUMNS,
  writeDelimited,
  writeDelimitedHead,
  writeJoblog,
} from './list-export.js';
import { writeListTable } from './list-table.js';
import { note, printJson } from './output.js';
import { handMadeJobs, openExistingWorkspace } from './workspace.js';

interface ListOptions {
  jobname?: string;
  tasklist?: string;
  state?: string;
  json?: boolean;
  attempts?: boolean;
  csv?: boolean;
  tsv?: boolean;
  joblog?: string;
  columns?: string;
}

/** Register `drover list`. */
export function registerList(program: Command): void {
  program
    .command('list [job]')
    .description(
      'tasks with their command, tag, state, exit code, attempts and timings: a table, JSON, CSV, TSV or a joblog',
    )
    .option('--jobname <job>', 'only this job (default: every job); `drover list JOB` says the same')
    .option('--tasklist <list>', 'only these tasks (needs --jobname), e.g. 1-3,5')
    .option('--state <states>', `only tasks in these states, comma separated: ${STATES.join(', ')}`)
    .option(
      '--attempts',
      'every attempt instead of every task, with the command it ran (earlier commands too)',
    )
    .option('--json', 'print a JSON array, one object per task (per attempt with --attempts)')
    .option('--csv', `print CSV (RFC 4180), one line per task: ${EXPORT_COLUMNS.join(', ')}`)
    .option('--tsv', 'print the --csv columns tab separated, with tab, newline and backslash as \\t \\n \\\\')
    .option(
      '--joblog <file>',
      "write GNU parallel's joblog of the job's finished tasks to FILE (whole, or not at all; - for stdout)",
    )
    .option('--columns <names>', `the table's columns, in order, comma separated: ${LIST_COLUMNS.join(', ')}`)
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
      process.stdout.write(first ? '[\n' : ',\n');
      process.stdout.write(lines);
      first = false;
    }
  }
  process.stdout.write(first ? '[]\n' : '\n]\n');
}

function list(opts: ListOptions): void {
  if (opts.tasklist !== undefined && opts.jobname === undefined)
    throw usageError('--tasklist needs --jobname');
  const columns = checkOutputOptions(opts);
  if (opts.jobname !== undefined) validateJobname(opts.jobname, '--jobname');
  if (opts.tasklist !== undefined) parseBlocks(opts.tasklist);
  const states = opts.state !== undefined ? parseStates(opts.state) : undefined;
  const ws = openExistingWorkspace();
  if (!ws) {
    if (opts.jobname !== undefined) throw jobNotFound(opts.jobname);
    if (opts.json) printJson([]);
    else if (opts.csv || opts.tsv) writeDelimitedHead(opts.csv ? 'csv' : 'tsv');
    return;
  }
  const jobs =
    opts.jobname !== undefined
      ? [loadJob(ws, opts.jobname, { report: note })]
      : // The ledger's jobs in the order they were made, then jobfiles it does not know yet (as status lists them).
        [...new Set([...listJobs(ws.ledger).map((j) => j.name), ...handMadeJobs(ws.paths)])].map((n) =>
          loadJob(ws, n, { report: note }),
        );
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
  const filters = jobs.map((job) => {
    refresh(ws.ledger, job.id);
    const ids = opts.tasklist !== undefined ? resolveTasklist(ws.ledger, job, opts.tasklist) : undefined;
    return { job, filter: { ...(ids ? { ids } : {}), ...(states ? { states } : {}) } };
  });
  if (opts.csv || opts.tsv) writeDelimited(ws.ledger, filters, opts.csv ? 'csv' : 'tsv');
  else if (opts.joblog !== undefined)
    writeJoblog(ws.ledger, filters[0]!.job, filters[0]!.filter, opts.joblog);
  else writeListTable(ws.ledger, filters, columns, process.stdout.isTTY ? process.stdout.columns : undefined);
}

/** The output flags that go together (one form of output; --joblog for one job); the table's columns. */
function checkOutputOptions(opts: ListOptions): readonly ListColumn[] {
  const forms = (['json', 'csv', 'tsv', 'joblog'] as const).filter(
    (f) => opts[f] !== undefined && opts[f] !== false,
  );
  if (forms.length > 1)
    throw usageError(`list: --${forms[0]} and --${forms[1]} are two outputs: give one of them`);
  const form = forms[0];
  if (opts.attempts && form !== undefined && form !== 'json')
    throw usageError(`list: --attempts prints a table or --json, not --${form}: drop one of them`);
  if (opts.joblog !== undefined) {
    if (opts.jobname === undefined)
      throw usageError('--joblog needs a job (its Seq is the task id): drover list JOB --joblog FILE');
    checkJoblogPath(opts.joblog);
  }
  if (opts.columns === undefined) return DEFAULT_COLUMNS;
  if (form !== undefined || opts.attempts)
    throw usageError(`--columns picks the table's columns: drop it with --${form ?? 'attempts'}`);
  return parseColumns(opts.columns);
}
