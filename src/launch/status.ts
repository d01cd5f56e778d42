import { refresh } from '../backends/refresh.js';
import { jobSpread } from '../ledger/durations.js';
import { jobLaunches } from '../ledger/launches.js';
import {
  failedTasks,
  jobCounts,
  jobRequeues,
  launchCounts,
  launchRequeues,
  launchTimes,
  slowestAttempts,
} from '../ledger/queries.js';
import { STATES } from '../protocol/states.js';
import type { Workspace } from './job.js';
import { loadJob } from './load-job.js';

/** The status of one job as the scripting contract defines it. */
export function jobStatus(ws: Workspace, name: string, report?: (line: string) => void) {
  const job = loadJob(ws, name, report ? { report } : {});
  refresh(ws.ledger, job.id);
  const counts = jobCounts(ws.ledger, job.id);
  const launches = jobLaunches(ws.ledger, job.id).map((l) => {
    const t = launchTimes(ws.ledger, l.id);
    return {
      id: String(l.id),
      backend: l.backend,
      tasklist: l.tasklist,
      tasks: l.task_count,
      created_at: new Date(l.created_at * 1000).toISOString(),
      open: l.open === 1,
      counts: launchCounts(ws.ledger, l.id),
      requeues: launchRequeues(ws.ledger, l.id),
      wall_seconds: t.first_start !== null && t.last_end !== null ? t.last_end - t.first_start : null,
      task_seconds: t.busy,
    };
  });
  const failed = failedTasks(ws.ledger, job.id, 20);
  return {
    jobname: job.name,
    tasks: job.task_count,
    counts,
    done: STATES.filter((s) => s !== 'pending' && s !== 'queued' && s !== 'running').reduce(
      (n, s) => n + counts[s],
      0,
    ),
    // Attempts run again by --requeue (time limit or checkpoint), apart from the counts of tasks by state.
    requeues: jobRequeues(ws.ledger, job.id),
    launches,
    durations: jobSpread(ws.ledger, job.id),
    slowest: slowestAttempts(ws.ledger, job.id, 5),
    failed,
  };
}
