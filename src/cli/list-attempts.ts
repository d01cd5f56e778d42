import type { JobRow } from '../ledger/jobs.js';
import type { Ledger } from '../ledger/ledger.js';
import { jobAttempts } from '../ledger/queries.js';
import { formatDuration, printJson, printTable } from './output.js';

/**
 * `list --attempts`: every attempt of the jobs' tasks, the history of earlier commands included (marked, and
 * never counted for a task's state), as a table or a JSON array.
 */
export function listAttempts(
  ledger: Ledger,
  jobs: readonly JobRow[],
  ids: (job: JobRow) => readonly number[] | undefined,
  json: boolean,
): void {
  const rows = jobs.flatMap((job) =>
    jobAttempts(ledger, job.id, ids(job)).map((a) => ({
      jobname: job.name,
      ...a,
      duration_s: a.started_at !== null && a.ended_at !== null ? a.ended_at - a.started_at : null,
    })),
  );
  if (json) {
    printJson(rows);
    return;
  }
  printTable(
    ['job', 'task', 'attempt', 'launch', 'state', 'exit', 'started', 'duration', 'host', 'command'],
    rows.map((r) => [
      r.jobname,
      r.task,
      r.attempt,
      r.launch,
      r.state,
      r.exit_code !== null ? String(r.exit_code) : (r.signal ?? '-'),
      r.started_at !== null
        ? new Date(r.started_at * 1000).toISOString().slice(0, 19).replace('T', ' ')
        : '-',
      formatDuration(r.duration_s),
      r.host ?? '-',
      r.current ? (r.command ?? '') : `(earlier command) ${r.command ?? '?'}`,
    ]),
  );
}
