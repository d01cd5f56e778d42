import type { Command } from 'commander';
import { refresh } from '../backends/refresh.js';
import { usageError } from '../errors.js';
import { loadJob } from '../launch/load-job.js';
import {
  bestRow,
  type Cell,
  type Column,
  cellOf,
  type FlatResult,
  fieldAndMode,
  flattenResult,
  resolveField,
  resultColumns,
  sortRows,
  sortValue,
} from '../launch/result-table.js';
import { collectResults, type TaskResult } from '../launch/results.js';
import { jobNotFound, resolveTasklist } from '../ledger/jobs.js';
import { STATES, type State } from '../protocol/states.js';
import { validateJobname } from '../sweep/index.js';
import { parseBlocks } from '../tasklist/tasklist.js';
import { csvLine } from './csv.js';
import { note, printJson } from './output.js';
import { cellText, displayWidth, tableLine, writeLines } from './table.js';
import { openExistingWorkspace } from './workspace.js';

interface ResultsOptions {
  tasklist?: string;
  state?: string;
  sort?: string;
  best?: string;
  json?: boolean;
  csv?: boolean;
}

/** Register `drover results`. */
export function registerResults(program: Command): void {
  program
    .command('results')
    .description('one row per task: its state, params, duration and the result its latest attempt left')
    .argument('<job>', 'the job')
    .option('--tasklist <list>', 'only these tasks, e.g. 1-3,5')
    .option('--state <states>', `only tasks in these states, comma separated: ${STATES.join(', ')}`)
    .option(
      '--sort <field>',
      'order by a result field, a param, duration_s or task; FIELD:desc for descending',
    )
    .option(
      '--best <field>',
      'only the best task by a numeric field: FIELD (least, the default), FIELD:min or FIELD:max; ties go to the lowest task id',
    )
    .option(
      '--json',
      'print a JSON array of {task, state, tag, params, duration_s, result} (one object with --best)',
    )
    .option('--csv', 'print CSV (RFC 4180): task, state, each param, duration_s, each result field')
    .addHelpText(
      'after',
      `
A task leaves a result by writing a JSON object to the file named by $DROVER_RESULT_FILE; with
'drover launch --result stdout' drover takes instead the last line of its stdout that is a JSON object.
Nested fields are flattened with dots (metrics.acc). A result field named like a column shows as result.NAME.`,
    )
    .action((job: string, opts: ResultsOptions) => results(job, opts));
}

function parseStates(text: string): State[] {
  return text.split(',').map((s) => {
    const st = s.trim() as State;
    if (!STATES.includes(st)) throw usageError(`--state '${s}' is not a state: use ${STATES.join(', ')}`);
    return st;
  });
}

interface Row {
  task: TaskResult;
  flat: FlatResult;
}

function results(name: string, opts: ResultsOptions): void {
  validateJobname(name, 'job');
  if (opts.json && opts.csv) throw usageError('--json and --csv both say how to print: give one');
  if (opts.tasklist !== undefined) parseBlocks(opts.tasklist);
  const states = opts.state !== undefined ? parseStates(opts.state) : undefined;
  const sort = opts.sort !== undefined ? fieldAndMode(opts.sort, ['asc', 'desc'] as const) : undefined;
  const best = opts.best !== undefined ? fieldAndMode(opts.best, ['min', 'max'] as const) : undefined;
  const ws = openExistingWorkspace();
  if (!ws) throw jobNotFound(name);
  const job = loadJob(ws, name, { report: note });
  refresh(ws.ledger, job.id);
  const ids = opts.tasklist !== undefined ? resolveTasklist(ws.ledger, job, opts.tasklist) : undefined;
  const found = collectResults(ws.ledger, job.id, { ...(ids ? { ids } : {}), ...(states ? { states } : {}) });
  let rows: Row[] = found.tasks.map((task) => ({
    task,
    flat: task.result === null ? new Map() : flattenResult(task.result),
  }));
  const columns = resultColumns(
    rows.map((r) => r.task),
    rows.map((r) => r.flat),
  );
  // Every flag is checked before anything is printed: a bad field is one line and exit 2.
  const sortBy = sort && resolveField(sort[0], columns, '--sort');
  const bestBy = best && resolveField(best[0], columns, '--best');
  reportProblems(found.problems);
  reportOddities(found.warnings);
  const by = (column: Column) => (row: Row) => sortValue(column, cellOf(column, row.task, row.flat));
  if (sortBy) rows = sortRows(rows, by(sortBy), sort[1] === 'desc');
  if (bestBy) {
    const one = bestRow(rows, by(bestBy), best[1] === 'max');
    if (one === undefined) {
      note(`drover: no task of job '${name}' has a number in ${bestBy.name} yet: see drover results ${name}`);
      if (opts.json) printJson(null);
      process.exitCode = 1;
      return;
    }
    if (opts.json) {
      printJson(one.task);
      return;
    }
    rows = [one];
  }
  if (opts.json) printJson(rows.map((r) => r.task));
  else if (opts.csv) printCsv(columns, rows);
  else printTable(columns, rows);
}

/** One line for the results that could not be used: how many, and the first. */
function reportProblems(problems: readonly string[]): void {
  if (problems.length === 0) return;
  const n = problems.length;
  note(
    `drover: warning: ${n} task${n === 1 ? "'s result" : "s' results"} could not be used and ${n === 1 ? 'is' : 'are'} null (${problems[0]}${n > 1 ? ', ...' : ''})`,
  );
}

/** One line for what was odd in results that are used (a collision, a number too large): how many, the first. */
function reportOddities(warnings: readonly string[]): void {
  if (warnings.length === 0) return;
  const n = warnings.length;
  note(
    `drover: warning: ${n} result${n === 1 ? ' has' : 's have'} fields to check (${warnings[0]}${n > 1 ? ', ...' : ''})`,
  );
}

/** A cell as text: numbers as JSON writes them, arrays as JSON, nothing as ''. */
function text(cell: Cell | unknown[]): string {
  if (cell === undefined || cell === null) return '';
  if (typeof cell === 'object') return JSON.stringify(cell);
  return String(cell);
}

function printCsv(columns: readonly Column[], rows: readonly Row[]): void {
  const out = [csvLine(columns.map((c) => c.name))];
  for (const r of rows) out.push(csvLine(columns.map((c) => text(cellOf(c, r.task, r.flat)))));
  process.stdout.write(out.join(''));
}

function printTable(columns: readonly Column[], rows: readonly Row[]): void {
  const cells = rows.map((r) =>
    columns.map((c) => {
      const v = cellOf(c, r.task, r.flat);
      if (v === undefined || v === null) return '-';
      // Durations to the millisecond for people; --json and --csv keep every digit.
      return cellText(
        c.kind === 'duration' && typeof v === 'number' ? String(Math.round(v * 1000) / 1000) : text(v),
      );
    }),
  );
  const head = columns.map((c) => cellText(c.name));
  const widths = head.map((h, i) =>
    cells.reduce((m, row) => Math.max(m, displayWidth(row[i]!)), displayWidth(h)),
  );
  writeLines([tableLine(head, widths), ...cells.map((row) => tableLine(row, widths))]);
}
