import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ElementExit, Personality } from '../personality.js';
import type { AccountingRecord, ElementState, FakeJob } from '../state.js';
import { accountingDelayMs, QUEUE } from './cluster.js';

/**
 * How the FAKE Grid Engine runs an array task, as Son of Grid Engine 8.1.9 does on the test cluster: the
 * spooled script runs under the -S shell (the `#!` line is ignored), in its own process group, in the
 * submitter's environment with -V (else a minimal one) plus Grid Engine's variables, stdout/stderr appended to the
 * -o/-e files. An output file that cannot be opened puts the task into Eqw. A stop (qdel, h_rt) sends SIGUSR2
 * under -notify and SIGKILL after the queue's notify time (SIGKILL at once without -notify), to the script's
 * process group only. Each end is a qacct record.
 */

const ERRNO_TEXT: Record<string, string> = {
  ENOENT: 'No such file or directory',
  EACCES: 'Permission denied',
  EISDIR: 'Is a directory',
  ENOTDIR: 'Not a directory',
};

/** An -o/-e path with Grid Engine's pseudo variables filled in, and the file it names. */
function outputPath(job: FakeJob, el: ElementState, pattern: string, kind: 'o' | 'e', host: string): string {
  const home = os.homedir();
  const filled = (pattern === '' ? home : pattern).replace(
    /\$(JOB_ID|TASK_ID|JOB_NAME|HOME|USER|HOSTNAME)/g,
    (_, v) =>
      v === 'JOB_ID'
        ? String(job.id)
        : v === 'TASK_ID'
          ? String(el.index)
          : v === 'JOB_NAME'
            ? job.name
            : v === 'HOME'
              ? home
              : v === 'USER'
                ? job.user
                : host,
  );
  const full = path.resolve(job.cwd, filled);
  let isDir = false;
  try {
    isDir = fs.statSync(full).isDirectory();
  } catch {
    // not there
  }
  return isDir
    ? path.join(full, `${job.name}.${kind}${job.id}.${el.index}`)
    : filled.endsWith('/')
      ? `${full}/`
      : full;
}

function open(file: string): number | string {
  if (file.endsWith('/')) return `can't open output file "${file}": Is a directory`;
  try {
    return fs.openSync(file, 'a');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? '';
    return `can't open output file "${file}": ${ERRNO_TEXT[code] ?? code}`;
  }
}

function record(job: FakeJob, el: ElementState, parts: Partial<AccountingRecord>): AccountingRecord {
  return {
    scheduler: 'gridengine',
    job: job.id,
    index: el.index,
    name: job.name,
    partition: QUEUE,
    cwd: job.cwd,
    user: job.user,
    submitted: job.submitted,
    ...(el.started !== undefined ? { started: el.started } : {}),
    ended: el.ended ?? Date.now() / 1000,
    visibleAt: (el.ended ?? Date.now() / 1000) + (job.accountingDelayMs ?? accountingDelayMs()) / 1000,
    state: '',
    exitCode: 0,
    signal: 0,
    failed: 0,
    failedText: '',
    exitStatus: 0,
    slots: job.cpus,
    ...parts,
  };
}

function endParts(el: ElementState, exit: ElementExit): Partial<AccountingRecord> {
  const signal = exit.signal ? os.constants.signals[exit.signal] : 0;
  const exitStatus = signal > 0 ? 128 + signal : (exit.code ?? 0);
  if (el.stopping === 'timeout')
    return { failed: 37, failedText: 'qmaster enforced h_rt, h_cpu, or h_vmem limit', exitStatus };
  if (signal > 0) return { failed: 100, failedText: 'assumedly after job', exitStatus, signal };
  return { exitStatus, exitCode: exitStatus };
}

export const gridEngineElement: Personality = {
  scope: 'group',
  env(job, el, host) {
    // Grid Engine makes a TMPDIR per task (/tmp/JOB.TASK.QUEUE); the fake's is in the job's folder.
    const tmp = path.join(path.dirname(job.script), 'tmp', `${job.id}.${el.index}.${QUEUE}`);
    fs.mkdirSync(tmp, { recursive: true });
    const env: Record<string, string> = {
      ...job.env,
      JOB_ID: String(job.id),
      JOB_NAME: job.name,
      JOB_SCRIPT: job.script,
      SGE_TASK_ID: String(el.index),
      SGE_TASK_FIRST: String(job.indices[0]),
      SGE_TASK_LAST: String(job.indices[job.indices.length - 1]),
      SGE_TASK_STEPSIZE: String(job.indices.length > 1 ? job.indices[1]! - job.indices[0]! : 1),
      NSLOTS: String(job.cpus),
      NHOSTS: '1',
      NQUEUES: '1',
      QUEUE,
      REQUEST: job.name,
      REQNAME: job.name,
      RESTARTED: el.restarts ? '1' : '0',
      ENVIRONMENT: 'BATCH',
      HOSTNAME: host,
      SGE_CWD_PATH: job.cwd,
      SGE_STDOUT_PATH: outputPath(job, el, job.stdout, 'o', host),
      SGE_STDERR_PATH: outputPath(
        job,
        el,
        job.stderr ?? job.stdout,
        job.stderr === undefined ? 'o' : 'e',
        host,
      ),
      SGE_STDIN_PATH: '/dev/null',
      SGE_ACCOUNT: 'sge',
      SGE_CELL: 'default',
      SGE_ARCH: 'lx-amd64',
      TMPDIR: tmp,
      TMP: tmp,
    };
    if (job.pe) env.PE = job.pe;
    return env;
  },
  outputs(job, el, host) {
    const outPath = outputPath(job, el, job.stdout, 'o', host);
    const out = open(outPath);
    if (typeof out === 'string') return { error: out };
    if (job.stderr === undefined) return { out, err: out };
    const err = open(outputPath(job, el, job.stderr, 'e', host));
    if (typeof err === 'string') {
      fs.closeSync(out);
      return { error: err };
    }
    return { out, err };
  },
  command: (job) => [job.shell ?? '/bin/sh', [job.script, ...job.args]],
  stopSignal: (job) =>
    job.notify ? { signal: 'SIGUSR2', killAfterS: job.killWaitS } : { signal: 'SIGKILL', killAfterS: 0 },
  stopNotice: () => undefined,
  record: (job, el, exit) => record(job, el, endParts(el, exit)),
  errorRecord: (job, el) => record(job, el, { failed: 26, failedText: 'opening input/output file' }),
};
