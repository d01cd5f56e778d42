import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Personality } from '../personality.js';
import type { AccountingRecord, ElementState, FakeJob } from '../state.js';
import { CLUSTER_NAME, jobcompFile, slurmTime } from './cluster.js';

/**
 * How the FAKE Slurm runs an array element, as Slurm 22.05 does on the test cluster: the spooled script runs
 * itself (its `#!`), in the submitter's environment (sbatch's default --export=ALL) plus Slurm's variables, with
 * stdout and stderr in the `--output` file (truncated at start). A stop (scancel, time limit) writes
 * slurmstepd's line into that file, sends SIGTERM to the script and every process descended from it, and
 * SIGKILL after KillWait; when the script ends, whatever it left is killed. Each end is one jobcomp line.
 */

/** The `--output` pattern of an element, with Slurm's `%` codes filled in. */
function outputPath(job: FakeJob, el: ElementState, pattern: string, host: string): string {
  const filled = pattern.replace(/%([%AajxuNn])/g, (_, c: string) => {
    switch (c) {
      case '%':
        return '%';
      case 'A':
        return String(job.id);
      case 'a':
        return String(el.index);
      case 'j':
        return String(el.jobId ?? job.id);
      case 'x':
        return job.name;
      case 'u':
        return job.user;
      default:
        return c === 'n' ? '0' : host;
    }
  });
  return path.resolve(job.cwd, filled);
}

function open(file: string): number {
  try {
    return fs.openSync(file, 'w');
  } catch {
    return fs.openSync('/dev/null', 'w'); // a missing output folder is not emulated: the output is lost
  }
}

/** Slurm's ExitCode of an end: `code:signal`. */
function exitParts(rec: Pick<AccountingRecord, 'exitCode' | 'signal'>): string {
  return `${rec.exitCode}:${rec.signal}`;
}

/** One line of the job completion log (jobcomp/filetxt), in the test cluster's field order. */
export function jobcompLine(rec: AccountingRecord, host: string): string {
  const f = [
    `JobId=${rec.elementJobId ?? rec.job}`,
    `UserId=${rec.user}(${process.getuid?.() ?? 0})`,
    `GroupId=${rec.user}(${process.getgid?.() ?? 0})`,
    `Name=${rec.name}`,
    `JobState=${rec.state}`,
    `Partition=${rec.partition}`,
    `TimeLimit=${rec.limitText ?? 'UNLIMITED'}`,
    `StartTime=${slurmTime(rec.started ?? rec.ended)}`,
    `EndTime=${slurmTime(rec.ended)}`,
    `NodeList=${host}`,
    'NodeCnt=1',
    `ProcCnt=${rec.slots}`,
    `WorkDir=${rec.cwd}`,
    'ReservationName=',
    `Tres=cpu=${rec.slots},node=1,billing=${rec.slots}`,
    'Account=',
    'QOS=',
    'WcKey=',
    'Cluster=unknown',
    `SubmitTime=${slurmTime(rec.submitted)}`,
    `EligibleTime=${slurmTime(rec.submitted)}`,
    `ArrayJobId=${rec.job}`,
    `ArrayTaskId=${rec.index}`,
    'DerivedExitCode=0:0',
    `ExitCode=${exitParts(rec)}`,
  ];
  return `${f.join(' ')} \n`;
}

export const slurmElement: Personality = {
  scope: 'tree',
  env(job, el, host) {
    const env: Record<string, string> = {
      ...job.env,
      SLURM_ARRAY_JOB_ID: String(job.id),
      SLURM_ARRAY_TASK_ID: String(el.index),
      SLURM_ARRAY_TASK_COUNT: String(job.indices.length),
      SLURM_ARRAY_TASK_MIN: String(job.indices[0]),
      SLURM_ARRAY_TASK_MAX: String(job.indices[job.indices.length - 1]),
      SLURM_ARRAY_TASK_STEP: '1',
      SLURM_JOB_ID: String(el.jobId),
      SLURM_JOBID: String(el.jobId),
      SLURM_JOB_NAME: job.name,
      SLURM_JOB_PARTITION: job.partition,
      ...(el.restarts ? { SLURM_RESTART_COUNT: String(el.restarts) } : {}),
      SLURM_JOB_USER: job.user,
      SLURM_SUBMIT_DIR: job.submitDir,
      SLURM_SUBMIT_HOST: host,
      SLURM_CLUSTER_NAME: CLUSTER_NAME,
      SLURM_CPUS_ON_NODE: String(job.cpus),
      SLURM_JOB_CPUS_PER_NODE: String(job.cpus),
      SLURM_JOB_NODELIST: host,
      SLURM_NODELIST: host,
      SLURMD_NODENAME: host,
      SLURM_JOB_NUM_NODES: '1',
      SLURM_NNODES: '1',
      SLURM_NODEID: '0',
      SLURM_PROCID: '0',
      SLURM_LOCALID: '0',
    };
    if (job.cpus > 1) env.SLURM_CPUS_PER_TASK = String(job.cpus);
    return env;
  },
  outputs(job, el, host) {
    const outPath = outputPath(job, el, job.stdout, host);
    const out = open(outPath);
    const err = job.stderr === undefined ? out : open(outputPath(job, el, job.stderr, host));
    return { out, err };
  },
  command: (job) => [job.script, job.args],
  stopSignal: (job) => ({ signal: 'SIGTERM', killAfterS: job.killWaitS }),
  stopNotice(_job, el, why, host) {
    const reason = why === 'timeout' ? ' DUE TO TIME LIMIT' : el.requeueing ? ' DUE TO JOB REQUEUE' : '';
    return `slurmstepd-${host}: error: *** JOB ${el.jobId} ON ${host} CANCELLED AT ${slurmTime(Date.now() / 1000)}${reason} ***\n`;
  },
  record(job, el, exit) {
    const signal = exit.signal ? os.constants.signals[exit.signal] : 0;
    const stopped = el.stopping;
    const state =
      stopped === 'timeout'
        ? 'TIMEOUT'
        : stopped === 'cancel'
          ? 'CANCELLED'
          : signal > 0 || (exit.code ?? 0) !== 0
            ? 'FAILED'
            : 'COMPLETED';
    return {
      scheduler: 'slurm',
      job: job.id,
      index: el.index,
      elementJobId: el.jobId!,
      name: job.name,
      partition: job.partition,
      cwd: job.cwd,
      user: job.user,
      submitted: job.submitted,
      ...(el.started !== undefined ? { started: el.started } : {}),
      ended: el.ended ?? Date.now() / 1000,
      state,
      exitCode: stopped ? 0 : (exit.code ?? 0),
      signal: stopped ? 0 : signal,
      failed: 0,
      failedText: '',
      exitStatus: exit.code ?? 128 + signal,
      ...(job.limitText !== undefined ? { limitText: job.limitText } : {}),
      slots: job.cpus,
    };
  },
  ended(dir, job, rec, host) {
    if (job.accounting === 'jobcomp') fs.appendFileSync(jobcompFile(dir), jobcompLine(rec, host));
  },
};
