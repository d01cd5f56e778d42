import path from 'node:path';
import { requestCancel } from '../cancel.js';
import type { Answer, Program } from '../main.js';
import { type FakeJob, FakeUsage, hostName, jobDir, readJson, readState } from '../state.js';
import { QMASTER_DOWN } from './cluster.js';

/**
 * FAKE `qmod -rj JOB.TASK...`: reschedule running array tasks as Son of Grid Engine 8.1.9 does (messages copied
 * from the test cluster, on stdout, exit 0 either way): a task of a job submitted `-r y` is killed and pends again,
 * to run with RESTARTED=1; one of a job that is not rerunnable stays as it is.
 */
function run(args: string[], dir: string): Answer {
  if (args[0] !== '-rj') throw new FakeUsage(`FAKE: qmod ${args[0] ?? ''} is not emulated (only -rj)`);
  let out = '';
  for (const a of args.slice(1)) {
    const m = /^(\d+)\.(\d+)$/.exec(a);
    if (!m) throw new FakeUsage(`FAKE: qmod -rj ${a}: only JOB.TASK is emulated`);
    const id = Number(m[1]);
    const index = Number(m[2]);
    const job = readJson<FakeJob>(path.join(jobDir(dir, id), 'job.json'));
    const el = readState(dir, id)?.elements.find((e) => e.index === index);
    if (!job || el?.state !== 'running') {
      out += `denied: job "${a}" does not exist\n`;
      continue;
    }
    if (!job.requeueable) {
      out += `The job-array task ${a} is not restartable\n`;
      continue;
    }
    requestCancel(dir, id, [index], true);
    out += `Pushed rescheduling of job-array task ${a} on host ${hostName()}\n`;
  }
  return { status: 0, stdout: out, stderr: '' };
}

export const qmod: Program = { run, down: { status: 1, stdout: '', stderr: QMASTER_DOWN } };
