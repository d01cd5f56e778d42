import type { Command } from 'commander';
import { refresh } from '../backends/refresh.js';
import { loadJob } from '../launch/load-job.js';
import { jobStatus } from '../launch/status.js';
import { jobNotFound, listJobs } from '../ledger/jobs.js';
import { jobCounts } from '../ledger/queries.js';
import { isFailedState, STATES } from '../protocol/states.js';
import { validateJobname } from '../sweep/index.js';
import { condenseIds } from '../tasklist/tasklist.js';
import { paintState } from './colour.js';
import { formatDuration, note, printJson, printTable } from './output.js';
import { cellText, cut } from './table.js';
import { handMadeJobs, openExistingWorkspace } from './workspace.js';

/** Register `drover status`. */
export function registerStatus(program: Command): void {
  program
    .command('status')
    .description('counts per state for a job and each of its launches, durations, slowest and failed tasks')
    .argument('[job]', 'the job (default: every job, one line each)')
    .option('--json', 'print one JSON object (see the scripting contract in docs/)')
    .action((job: string | undefined, opts: { json?: boolean }) => {
      status(job, opts.json === true);
    });
}

function status(name: string | undefined, json: boolean): void {
  if (name !== undefined) validateJobname(name, 'job');
  const ws = openExistingWorkspace();
  if (!ws) {
    if (name !== undefined) throw jobNotFound(name);
    if (json) printJson([]);
    else note('drover: no jobs here yet: start with drover prelaunch (see drover --help)');
    return;
  }
  if (name === undefined) {
    refresh(ws.ledger);
    // The ledger's jobs in the order they were made, then jobfiles it does not know yet (onager's, or by hand).
    const names = new Set([...listJobs(ws.ledger).map((j) => j.name), ...handMadeJobs(ws.paths)]);
    const rows = [...names]
      .map((n) => loadJob(ws, n, { report: note }))
      .map((j) => ({
        jobname: j.name,
        tasks: j.task_count,
        counts: jobCounts(ws.ledger, j.id),
      }));
    if (json) {
      printJson(rows);
      return;
    }
    printTable(
      ['job', 'tasks', 'succeeded', 'not ok', 'running', 'queued', 'pending', 'cancelled'],
      rows.map((r) => [
        r.jobname,
        r.tasks,
        r.counts.succeeded,
        STATES.filter(isFailedState).reduce((n, s) => n + r.counts[s], 0),
        r.counts.running,
        r.counts.queued,
        r.counts.pending,
        r.counts.cancelled,
      ]),
    );
    return;
  }
  const s = jobStatus(ws, name, note);
  if (json) {
    printJson(s);
    return;
  }
  const pct = s.tasks > 0 ? Math.floor((100 * s.counts.succeeded) / s.tasks) : 0;
  const requeued = s.requeues > 0 ? `, ${s.requeues} requeue${s.requeues === 1 ? '' : 's'}` : '';
  process.stdout.write(
    `job ${s.jobname}: ${s.tasks} tasks, ${s.counts.succeeded} succeeded (${pct}%)${requeued}\n`,
  );
  const shown = STATES.filter((st) => s.counts[st] > 0);
  printTable(
    shown.map((st) => paintState(st, st)),
    [shown.map((st) => s.counts[st])],
  );
  if (s.launches.length > 0) {
    process.stdout.write('\nlaunches\n');
    printTable(
      [
        'launch',
        'backend',
        'tasklist',
        'tasks',
        'succeeded',
        'not ok',
        'running',
        'queued',
        'wall',
        'started',
      ],
      s.launches.map((l) => [
        l.id,
        l.backend,
        l.tasklist.length > 24 ? `${l.tasklist.slice(0, 21)}...` : l.tasklist,
        l.tasks,
        l.counts.succeeded,
        STATES.filter(isFailedState).reduce((n, st) => n + l.counts[st], 0),
        l.counts.running,
        l.counts.queued,
        formatDuration(l.wall_seconds),
        l.created_at.replace('T', ' ').slice(0, 19),
      ]),
    );
  }
  const d = s.durations;
  if (d.min !== null) {
    process.stdout.write(
      `\ndurations: min ${formatDuration(d.min)}, median ${formatDuration(d.median)}, p95 ${formatDuration(d.p95)}, max ${formatDuration(d.max)}\n`,
    );
  }
  if (s.slowest.length > 0) {
    process.stdout.write('slowest\n');
    // A sweep's tasks are told apart by their values: those, in the sweep's order; else the tag and command.
    const keys = [...new Set(s.slowest.flatMap((a) => Object.keys(a.params)))];
    const named = keys.length > 0;
    printTable(
      [
        'task',
        'attempt',
        'duration',
        'state',
        ...(named ? keys.map((k) => cut(cellText(k), 24)) : ['tag', 'command']),
      ],
      s.slowest.map((a) => [
        a.task,
        a.attempt,
        formatDuration(a.seconds),
        paintState(a.state, a.state),
        ...(named
          ? keys.map((k) => cut(cellText(a.params[k] ?? ''), 24))
          : [cut(cellText(a.tag), 24), cut(cellText(a.command), 60)]),
      ]),
    );
  }
  if (s.failed.length > 0) {
    process.stdout.write(
      `not ok: ${s.failed.map((f) => `${f.task} (${f.state}${f.exit_code !== null ? ` ${f.exit_code}` : ''})`).join(', ')}${s.failed.length === 20 ? ', ...' : ''}\n`,
    );
    const why = new Map<string, number[]>();
    for (const f of s.failed) {
      if (!f.reason) continue;
      const key = `${f.state}: ${f.reason}`;
      why.set(key, [...(why.get(key) ?? []), f.task]);
    }
    for (const [reason, ids] of why) process.stdout.write(`  ${condenseIds(ids)} ${reason}\n`);
    process.stdout.write(`rerun them: drover launch --jobname ${s.jobname} --failed\n`);
  }
}
