import { shellQuote } from '../backends/cluster/wrapper.js';
import { signalExitCode } from '../backends/local/submit.js';
import { type LaunchResult, NEXT_LAUNCH } from '../launch/launch.js';
import { launchNotSucceeded } from '../ledger/launch-tasks.js';
import type { Ledger } from '../ledger/ledger.js';
import { launchCounts, launchTimes } from '../ledger/queries.js';
import { STATES } from '../protocol/states.js';
import { paintState } from './colour.js';
import { formatDuration, note, printJson, printTable } from './output.js';
import type { Workspace } from './workspace.js';

/** The one-screen summary after a foreground launch: counts per state, time, and the tasks that did not succeed. */
export function printLaunchSummary(ledger: Ledger, jobId: number, launchId: number, jobname: string): void {
  const counts = launchCounts(ledger, launchId);
  const times = launchTimes(ledger, launchId);
  const wall =
    times.first_start !== null && times.last_end !== null ? times.last_end - times.first_start : null;
  printTable(
    ['state', 'tasks'],
    STATES.filter((s) => counts[s] > 0).map((s) => [paintState(s, s), counts[s]]),
  );
  const bad = launchNotSucceeded(ledger, jobId, launchId, 10);
  process.stdout.write(`launch ${launchId} of '${jobname}': ${formatDuration(wall)} wall\n`);
  if (bad.length > 0) {
    process.stdout.write(
      `not succeeded: ${bad.map((b) => `${b.task} (${b.state}${b.exit_code !== null ? ` ${b.exit_code}` : ''})`).join(', ')}${bad.length === 10 ? ', ...' : ''}\n`,
    );
    // --failed leaves cancelled tasks out (stopped on purpose); --unfinished takes them and the failed ones.
    const rerun = `rerun them: drover launch --jobname ${jobname} ${counts.cancelled > 0 ? '--unfinished' : '--failed'}`;
    const failed = bad.find((b) => b.state !== 'cancelled');
    process.stdout.write(
      `${failed ? `see one: drover logs ${jobname} ${failed.task} --err · ` : ''}${rerun}\n`,
    );
  }
}

/** `--dry-run`: what would run — for a cluster the scheduler commands too, exactly as the launch would run them. */
export function printDryRun(made: LaunchResult, json: boolean): number {
  const commands = made.outcome?.commands ?? [];
  const warnings = made.outcome?.warnings ?? [];
  if (json) {
    printJson({
      jobname: made.jobname,
      launch: null,
      backend: made.backend,
      dry_run: true,
      tasks: made.count,
      tasklist: made.tasklist,
      submissions: commands,
      warnings,
    });
    return 0;
  }
  note(
    `would launch ${made.count} task(s) of job '${made.jobname}' on ${made.backend}: tasklist ${made.tasklist}`,
  );
  if (commands.length > 0) {
    note(`with ${commands.length} submission(s) (${NEXT_LAUNCH} is the launch's number):`);
    for (const c of commands) note(`  ${c.map(displayArg).join(' ')}`);
  }
  process.stdout.write((made.tasks ?? []).map((t) => `${t.id}\t${t.command}\n`).join(''));
  return 0;
}

/** An argument as a shell would need it typed: bare when safe, else single-quoted. */
function displayArg(a: string): string {
  return /^[\w@%+=:,./-]+$/.test(a.replaceAll(NEXT_LAUNCH, 'N')) ? a : shellQuote(a);
}

/** Print what a launch did; its exit code (1 when a foreground launch had tasks that did not succeed). */
export function reportLaunch(ws: Workspace, made: LaunchResult, json: boolean, what: string): number {
  const { launch: row, outcome } = made;
  const base = {
    jobname: made.jobname,
    launch: row ? String(row.id) : null,
    backend: made.backend,
    tasks: made.count,
    tasklist: made.tasklist,
  };
  for (const w of outcome?.warnings ?? []) note(`drover: warning: ${w}`);
  if (!outcome) {
    note(`drover: nothing to launch: job '${made.jobname}' has no ${what}`);
    if (json) printJson({ jobname: made.jobname, launch: null, tasks: 0 });
    return 0;
  }
  if (!row) return printDryRun(made, json);
  const ran = outcome.ran;
  if (!ran) {
    const handles = outcome.handles ?? {};
    if (json)
      printJson({
        ...base,
        ...('pid' in handles ? { pid: handles.pid } : {}),
        handles,
        warnings: outcome.warnings,
      });
    else note(`launch ${row.id}: ${outcome.summary}; follow with: drover status ${made.jobname}`);
    return 0;
  }
  // After SIGHUP no terminal is left to read the summary; output to a file or a pipe (nohup, a log) still gets it.
  const hungUp = ran.interrupted === 'SIGHUP' && process.stdout.isTTY;
  if (ran.interrupted && (hungUp || made.unrecorded)) return signalExitCode(ran.interrupted);
  const counts = launchCounts(ws.ledger, row.id);
  if (json) printJson({ ...base, counts });
  else printLaunchSummary(ws.ledger, row.job_id, row.id, made.jobname);
  if (ran.interrupted) return signalExitCode(ran.interrupted);
  return counts.succeeded === made.count ? 0 : 1;
}
