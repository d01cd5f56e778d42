import type { Command } from 'commander';
import { refresh } from '../backends/refresh.js';
import { usageError } from '../errors.js';
import { loadJob } from '../launch/load-job.js';
import { type JobRow, jobNotFound, listJobs, resolveTasklist } from '../ledger/jobs.js';
import type { Ledger } from '../ledger/ledger.js';
import { taskJsonChunks } from '../ledger/queries.js';
import { columnWidths, paramColumns, type TaskFilter, tableRows } from '../ledger/task-table.js';
import { STATES, type State } from '../protocol/states.js';
import { validateJobname } from '../sweep/index.js';
import { parseBlocks } from '../tasklist/tasklist.js';
import { listAttempts } from './list-attempts.js';
import { note, printJson } from './output.js';
import { cellText, displayWidth, tableLine, writeLines } from './table.js';
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
  const filters = jobs.map((job) => {
    refresh(ws.ledger, job.id);
    const ids = opts.tasklist !== undefined ? resolveTasklist(ws.ledger, job, opts.tasklist) : undefined;
    return { job, filter: { ...(ids ? { ids } : {}), ...(states ? { states } : {}) } };
  });
  listTable(ws.ledger, filters);
}

const HEAD = ['job', 'task', 'state', 'exit', 'attempts', 'tag'];

/**
 * `list` as a table: the widths from one aggregate query per job, then the rows a chunk at a time, each line
 * made once and written once. Linear in the tasks (cli-table3 took 34 s for 16,000, quadratically). Each params
 * key (the sweep's `--lr`, `pos1`, ...) is a column after `tag`; a task without that key shows `-`.
 */
function listTable(ledger: Ledger, jobs: { job: JobRow; filter: TaskFilter }[]): void {
  const keys = new Map<string, number>();
  const widths = HEAD.map((h) => h.length);
  for (const { job, filter } of jobs) {
    const w = columnWidths(ledger, job.id, filter);
    const tag = w.otherTags.reduce((m, t) => Math.max(m, displayWidth(cellText(t))), w.asciiTag);
    const job_ = displayWidth(cellText(job.name));
    [job_, w.id, w.state, w.exit, w.attempts, tag].forEach((n, i) => {
      widths[i] = Math.max(widths[i]!, n);
    });
    for (const c of paramColumns(ledger, job.id, filter)) {
      const width = c.otherValues.reduce((m, v) => Math.max(m, displayWidth(cellText(v))), c.asciiWidth);
      keys.set(c.key, Math.max(keys.get(c.key) ?? displayWidth(cellText(c.key)), width));
    }
  }
  const names = [...keys.keys()];
  const allWidths = [...widths, ...keys.values(), 0];
  writeLines([tableLine([...HEAD, ...names.map(cellText), 'command'], allWidths)]);
  for (const { job, filter } of jobs) {
    const name = cellText(job.name);
    for (const rows of tableRows(ledger, job.id, filter)) {
      writeLines(
        rows.map(([id, state, exit, attempts, tag, command, params]) => {
          const values = names.length === 0 ? {} : (JSON.parse(params) as Record<string, string>);
          return tableLine(
            [
              name,
              String(id),
              state,
              exit === null ? '-' : String(exit),
              String(attempts),
              cellText(tag),
              ...names.map((k) => (Object.hasOwn(values, k) ? cellText(values[k]!) : '-')),
              cellText(command),
            ],
            allWidths,
          );
        }),
      );
    }
  }
}
