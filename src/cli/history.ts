import type { Command } from 'commander';
import { usageError } from '../errors.js';
import { queryHistory } from '../ledger/history.js';
import { COUNTS } from '../util/limits.js';
import { quoted } from '../util/quote.js';
import { printJson, printTable } from './output.js';
import { intOption } from './parse.js';
import { openExistingWorkspace } from './workspace.js';

interface HistoryOptions {
  launch?: boolean;
  prelaunch?: boolean;
  dryRun: boolean;
  n?: number;
  since?: string;
  details?: boolean;
  full?: boolean;
  json?: boolean;
}

/** Register `drover history`. */
export function registerHistory(program: Command): void {
  program
    .command('history')
    .description('the drover commands run in this folder (as onager history)')
    .option('--launch', 'only launch commands')
    .option('--prelaunch', 'only prelaunch commands')
    .option('--no-dry-run', 'leave out dry runs')
    .option('-n <count>', 'only the last n entries', intOption('-n', COUNTS.entries))
    .option('--since <date>', 'only entries at or after this date/time (e.g. 2026-11-30 or 2026-11-30T10:00)')
    .option('--details', 'show the folder, job and launch of each entry')
    .option('--full', 'do not shorten long command lines')
    .option('--json', 'print a JSON array')
    .action((opts: HistoryOptions) => history(opts));
}

function history(opts: HistoryOptions): void {
  let since: number | undefined;
  if (opts.since !== undefined) {
    const t = Date.parse(opts.since);
    if (Number.isNaN(t))
      throw usageError(
        `--since ${quoted(opts.since)} is not a date: write e.g. 2026-11-30 or 2026-11-30T10:00`,
      );
    since = t / 1000;
  }
  const ws = openExistingWorkspace();
  const kinds = [...(opts.launch ? ['launch'] : []), ...(opts.prelaunch ? ['prelaunch'] : [])];
  const rows = ws
    ? queryHistory(ws.ledger, {
        kinds,
        noDryRun: !opts.dryRun,
        ...(since !== undefined ? { since } : {}),
        ...(opts.n !== undefined ? { limit: opts.n } : {}),
      })
    : [];
  const entries = rows.map((r) => ({
    id: r.id,
    at: new Date(r.at * 1000).toISOString(),
    kind: r.kind,
    jobname: r.jobname,
    command: `drover ${(JSON.parse(r.argv) as string[]).map(quote).join(' ')}`,
    cwd: r.cwd,
    dry_run: r.dry_run === 1,
    launch: r.launch_id === null ? null : String(r.launch_id),
  }));
  if (opts.json) {
    printJson(entries);
    return;
  }
  const cut = (s: string) => (opts.full || s.length <= 100 ? s : `${s.slice(0, 97)}...`);
  const head = ['#', 'when', 'command', ...(opts.details ? ['job', 'launch', 'dry run', 'folder'] : [])];
  printTable(
    head,
    entries.map((e) => [
      e.id,
      e.at.replace('T', ' ').slice(0, 19),
      cut(e.command),
      ...(opts.details ? [e.jobname ?? '-', e.launch ?? '-', e.dry_run ? 'yes' : 'no', e.cwd] : []),
    ]),
  );
}

/** Quote an argument for display the way a shell user would type it. */
function quote(arg: string): string {
  return /^[A-Za-z0-9_./:,+@%=-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, "'\\''")}'`;
}
