import type { Command } from 'commander';
import { refresh } from '../backends/refresh.js';
import { usageError } from '../errors.js';
import { loadJob } from '../launch/load-job.js';
import { jobStatus } from '../launch/status.js';
import { jobNotFound } from '../ledger/jobs.js';
import { getLaunch, jobLaunches, type LaunchRow } from '../ledger/launches.js';
import { endedBadly, endedBadlyCount, launchCounts, taskLabeler } from '../ledger/queries.js';
import { validateJobname } from '../sweep/index.js';
import { COUNTS, SECONDS } from '../util/limits.js';
import { note } from './output.js';
import { durationOption, intOption } from './parse.js';
import { Progress } from './progress.js';
import { printLaunchSummary } from './summary.js';
import { openExistingWorkspace, type Workspace } from './workspace.js';

interface WatchOptions {
  launch?: number;
  quiet?: boolean;
  /** No live view: the job's status (as `drover status J --json`) as a JSON line at once and at each change. */
  json?: boolean;
  /** Seconds between reads of the ledger (POLL_MS by default). */
  interval?: number;
  /** Nothing on stdout (`launch --follow --json` printed its JSON already). */
  silent?: boolean;
}

/** How often the ledger is read again (each read asks a cluster's scheduler once: docs/slurm.md). */
const POLL_MS = 500;

/** Register `drover watch`. */
export function registerWatch(program: Command): void {
  program
    .command('watch')
    .description(
      'the live view of a launch on any backend (local, detached, Slurm, Grid Engine, pool) until it ends; Ctrl-C stops watching, not the launch',
    )
    .argument('<job>', 'the job')
    .option(
      '--launch <n>',
      'this launch of the job (default: its newest)',
      intOption('--launch', COUNTS.tasks),
    )
    .option('-q, --quiet', 'no live view: wait, then print the summary')
    .option(
      '--interval <seconds>',
      'how often to read the ledger, which on a cluster asks its queue (default 0.5)',
      durationOption('--interval', SECONDS.watchInterval),
    )
    .option(
      '--json',
      "no live view: print the job's status (as drover status J --json) on one line at once and at each change",
    )
    .action(async (job: string, opts: WatchOptions) => {
      process.exitCode = await watch(job, opts);
    });
}

/** The launch to watch: the one asked for, or the job's newest. */
function pick(ws: Workspace, jobId: number, jobname: string, asked: number | undefined): LaunchRow {
  if (asked !== undefined) {
    const l = getLaunch(ws.ledger, asked);
    if (!l || l.job_id !== jobId)
      throw usageError(
        `--launch ${asked}: job '${jobname}' has no such launch: see drover status ${jobname}`,
      );
    return l;
  }
  const all = jobLaunches(ws.ledger, jobId);
  const newest = all[all.length - 1];
  if (!newest)
    throw usageError(`job '${jobname}' has no launch to watch: launch it with drover launch ${jobname}`);
  return newest;
}

/**
 * Follow a launch from the ledger until it is closed: the bar (or piped lines) from its counts, and each
 * attempt that ended badly printed once, as `launch` prints them. Exit code as a foreground launch's: 0 when
 * every task succeeded, 1 otherwise; 130 when Ctrl-C stopped the watching (the launch runs on).
 */
export async function watch(jobname: string, opts: WatchOptions): Promise<number> {
  // Ctrl-C stops the watching, never drover in the middle of its first reads: the handler comes before them.
  let stopped = false;
  const onInt = () => {
    stopped = true;
  };
  process.once('SIGINT', onInt);
  try {
    return await watchLaunch(jobname, opts, () => stopped);
  } finally {
    process.off('SIGINT', onInt);
  }
}

async function watchLaunch(jobname: string, opts: WatchOptions, stopped: () => boolean): Promise<number> {
  validateJobname(jobname, 'job');
  const ws = openExistingWorkspace();
  if (!ws) throw jobNotFound(jobname);
  const job = loadJob(ws, jobname, { report: note });
  const chosen = pick(ws, job.id, jobname, opts.launch);
  const every = opts.interval !== undefined ? opts.interval * 1000 : POLL_MS;
  if (opts.json === true) return watchJson(ws, jobname, chosen.id, every, stopped);
  const show = opts.quiet !== true && opts.silent !== true;
  const view = show
    ? new Progress(chosen.task_count, jobname, { label: taskLabeler(ws.ledger, jobname) })
    : undefined;
  const reported = new Set<string>();
  for (;;) {
    refresh(ws.ledger, job.id);
    const launch = getLaunch(ws.ledger, chosen.id)!;
    const counts = launchCounts(ws.ledger, launch.id);
    // Read the attempts only when there are new ones: a launch may have thousands that ended badly.
    const bad = endedBadlyCount(ws.ledger, launch.id) > reported.size ? endedBadly(ws.ledger, launch.id) : [];
    for (const a of bad) {
      const key = `${a.task}.${a.attempt}`;
      if (reported.has(key)) continue;
      reported.add(key);
      view?.report({
        task: a.task,
        attempt: a.attempt,
        state: a.state,
        exitCode: a.exit_code,
        signal: a.signal,
        ...(a.reason !== null ? { reason: a.reason } : {}),
        seconds: a.seconds,
        // A slice of a segment is no file to open: the line says `drover logs J T --err` instead.
        err: a.stderr_off === null ? a.stderr_path : null,
        willRetry: false,
        // Run again, resumed, by --requeue: the line says so rather than show a plain failure.
        ...(a.requeued === 1 ? { requeue: true } : {}),
      });
    }
    view?.sync(counts);
    if (!launch.open) {
      view?.stop();
      if (!opts.silent) printLaunchSummary(ws.ledger, job.id, launch.id, jobname);
      return counts.succeeded === launch.task_count ? 0 : 1;
    }
    if (stopped()) {
      view?.stop();
      note(`drover: stopped watching; launch ${launch.id} runs on (drover watch ${jobname} to watch again)`);
      return 130;
    }
    await new Promise((r) => setTimeout(r, every));
  }
}

/**
 * `watch --json`: the job's status object as `status --json` prints it, one line each time it differs from the
 * last one printed (the first at once), until the launch has ended; the exit code as the live view's.
 */
async function watchJson(
  ws: Workspace,
  jobname: string,
  launchId: number,
  every: number,
  stopped: () => boolean,
): Promise<number> {
  let last = '';
  for (let first = true; ; first = false) {
    // Whether it has ended is read before the status: the last line printed is then the status at its end.
    const ended = !getLaunch(ws.ledger, launchId)!.open;
    const line = JSON.stringify(jobStatus(ws, jobname, first ? note : undefined));
    if (line !== last) {
      process.stdout.write(`${line}\n`);
      last = line;
    }
    if (ended) {
      const launch = getLaunch(ws.ledger, launchId)!;
      return launchCounts(ws.ledger, launchId).succeeded === launch.task_count ? 0 : 1;
    }
    // Ended while being read: once more at once, for the status at its end.
    if (!getLaunch(ws.ledger, launchId)!.open) continue;
    if (stopped()) {
      note(`drover: stopped watching; launch ${launchId} runs on (drover watch ${jobname} to watch again)`);
      return 130;
    }
    await new Promise((r) => setTimeout(r, every));
  }
}
