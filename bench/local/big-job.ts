import fs from 'node:fs';
import path from 'node:path';
import { findJob } from '../../src/ledger/jobs.js';
import { setLaunchHandles } from '../../src/ledger/launches.js';
import { Ledger } from '../../src/ledger/ledger.js';
import { createLaunch } from '../../src/ledger/transitions.js';
import { droverPaths } from '../../src/paths.js';
import type { EndRecord, RunnerEndRecord, RunnerRecord, StartRecord } from '../../src/protocol/records.js';
import { RECORDS_VERSION } from '../../src/protocol/records.js';
import { processStartTime, shortHostname } from '../../src/util/proc.js';
import { BenchError, drover, range, tempDir } from '../util.js';

/** A folder whose ledger holds one job of 100 × 1000 tasks, every one succeeded once. */
export interface BigJob {
  dir: string;
  jobname: string;
  tasks: number;
  /** How the attempts got into the ledger, said in the output. */
  how: string;
  /** Time of the step that recorded the attempts (launch, or first status ingesting the records), ms. */
  recordMs: number;
  recordWhat: string;
}

/** The sweep of the big job: `/bin/true --lr L --seed S`, 100 × 1000 = 100,000 tasks. */
export function bigSweep(jobname: string, command: string): string[] {
  return [
    'prelaunch',
    '+command',
    command,
    '+jobname',
    jobname,
    '+arg',
    '--lr',
    ...range(100),
    '+arg',
    '--seed',
    ...range(1000),
    '+q',
  ];
}

/**
 * Make the job with a real `drover prelaunch`, then record one succeeded attempt per task.
 *
 * `real`: run a real `drover launch --max-tasks 2` of all 100,000 `/bin/true` (minutes on 2 cores).
 * Otherwise: create the launch with drover's own ledger code (`createLaunch`, what `drover launch` calls),
 * write the attempt records a runner would write (runner, start and end per task, runner-end) to the launch's
 * records file, and let the first `drover status` ingest them through drover's real ingestion. Log files are
 * not written (status does not read them).
 */
export function buildBigJob(real: boolean): BigJob {
  const dir = tempDir('status');
  const jobname = 'big';
  const tasks = 100_000;
  drover(bigSweep(jobname, '/bin/true'), dir);
  if (real) {
    const r = drover(
      ['launch', '--jobname', jobname, '--backend', 'local', '--max-tasks', '2', '-q'],
      dir,
      3 * 60 * 60 * 1000, // 100,000 processes: minutes when the machine is quiet
    );
    return {
      dir,
      jobname,
      tasks,
      how: 'a real `drover launch --max-tasks 2` of 100,000 `/bin/true`',
      recordMs: r.ms,
      recordWhat: 'the real launch of 100,000 tasks',
    };
  }
  const paths = droverPaths(path.join(dir, '.drover'));
  const ledger = Ledger.open(paths);
  try {
    const job = findJob(ledger, jobname);
    if (!job || job.task_count !== tasks) throw new BenchError(`prelaunch made ${job?.task_count} tasks`);
    const ids = Array.from({ length: tasks }, (_, i) => i + 1);
    const { launch } = createLaunch(ledger, job, 'local', ids, { maxTasks: 2, retries: 0 }, (id) =>
      paths.launchDir(jobname, id),
    );
    const host = shortHostname();
    setLaunchHandles(ledger, launch.id, { host, pid: process.pid, pid_start: processStartTime(process.pid) });
    const recordsDir = path.join(launch.dir, 'records');
    fs.mkdirSync(recordsDir, { recursive: true });
    const logDir = paths.logDir(jobname, launch.id);
    const runnerName = `g1.${host}.${process.pid}`;
    const fd = fs.openSync(path.join(recordsDir, `${runnerName}.jsonl`), 'w');
    // Two slots, ~3.5 ms per task as measured for /bin/true.
    const t0 = Date.now() / 1000 - (tasks / 2) * 0.0035;
    const head: RunnerRecord = {
      type: 'runner',
      v: RECORDS_VERSION,
      runner: runnerName,
      launch: launch.id,
      job: jobname,
      host,
      pid: process.pid,
      pid_start: processStartTime(process.pid),
      slots: 2,
      at: t0,
    };
    let lines: string[] = [JSON.stringify(head)];
    for (const id of ids) {
      const at = t0 + Math.floor((id - 1) / 2) * 0.0035;
      const start: StartRecord = {
        type: 'start',
        task: id,
        attempt: 1,
        at,
        pid: 100000 + id,
        slot: (id - 1) % 2,
        gpus: null,
        host,
        out: path.join(logDir, `${id}.1.out`),
        err: path.join(logDir, `${id}.1.err`),
      };
      const end: EndRecord = {
        type: 'end',
        task: id,
        attempt: 1,
        at: at + 0.003,
        state: 'succeeded',
        exit_code: 0,
        signal: null,
      };
      lines.push(JSON.stringify(start), JSON.stringify(end));
      if (lines.length >= 20_000) {
        fs.writeSync(fd, `${lines.join('\n')}\n`);
        lines = [];
      }
    }
    const tail: RunnerEndRecord = { type: 'runner-end', at: t0 + (tasks / 2) * 0.0035, reason: 'done' };
    lines.push(JSON.stringify(tail));
    fs.writeSync(fd, `${lines.join('\n')}\n`);
    fs.closeSync(fd);
  } finally {
    ledger.close();
  }
  // The first status ingests the 200,002 records: drover's own code writes every attempt row.
  const first = drover(['status', jobname, '--json'], dir);
  return {
    dir,
    jobname,
    tasks,
    how: 'synthetic attempt records (what a runner writes) for a launch made with drover’s createLaunch, ingested by the first `drover status`',
    recordMs: first.ms,
    recordWhat: 'the first `drover status` (ingests 200,002 records)',
  };
}
