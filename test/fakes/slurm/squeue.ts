import type { Answer, Program } from '../main.js';
import { slurmList } from '../ranges.js';
import { type ElementState, type FakeJob, FakeUsage, hostName, listJobs, readState } from '../state.js';

/**
 * FAKE `squeue`: the pending and running elements of the fake queue, as Slurm 22.05 prints them: `-r` lists each
 * element (`12_3`), without it the pending elements of an array fold into one line (`12_[4-9%2]`); `-j` with a
 * single unknown id exits 1 "Invalid job id specified"; `-h`, `-o` with the codes drover and the tests use.
 */

interface Line {
  job: FakeJob;
  id: string;
  state: 'PD' | 'R';
  reason: string;
  jobId: number;
  started?: number;
}

/** Slurm's elapsed time: `M:SS`, `H:MM:SS`. */
function elapsed(seconds: number): string {
  const s = Math.floor(seconds);
  const mm = String(Math.floor((s % 3600) / 60));
  const ss = String(s % 60).padStart(2, '0');
  return s >= 3600 ? `${Math.floor(s / 3600)}:${mm.padStart(2, '0')}:${ss}` : `${mm}:${ss}`;
}

function field(code: string, l: Line): string {
  switch (code) {
    case 'i':
      return l.id;
    case 't':
      return l.state;
    case 'T':
      return l.state === 'PD' ? 'PENDING' : 'RUNNING';
    case 'r':
      return l.reason;
    case 'j':
      return l.job.name;
    case 'u':
      return l.job.user;
    case 'P':
      return l.job.partition;
    case 'F':
      return String(l.job.id);
    case 'A':
      return String(l.jobId);
    case 'C':
      return String(l.job.cpus);
    case 'D':
      return '1';
    case 'M':
      return l.started === undefined ? '0:00' : elapsed(Date.now() / 1000 - l.started);
    case 'R':
      return l.state === 'PD' ? `(${l.reason})` : hostName();
    default:
      throw new FakeUsage(`FAKE: format code %${code} is not emulated`);
  }
}

const HEADERS: Record<string, string> = {
  i: 'JOBID',
  t: 'ST',
  T: 'STATE',
  r: 'REASON',
  j: 'NAME',
  u: 'USER',
  P: 'PARTITION',
  F: 'ARRAY_JOB_ID',
  A: 'JOBID',
  C: 'CPUS',
  D: 'NODES',
  M: 'TIME',
  R: 'NODELIST(REASON)',
};

function format(fmt: string, l: Line): string {
  return fmt.replace(/%(\.?\d*)([a-zA-Z%])/g, (_, _w: string, c: string) => (c === '%' ? '%' : field(c, l)));
}

function pendingReason(job: FakeJob, state: ElementState[]): string {
  if (job.neverRuns) return job.neverRuns;
  const running = state.filter((e) => e.state === 'running').length;
  return job.throttle !== undefined && running >= job.throttle ? 'JobArrayTaskLimit' : 'None';
}

function lines(dir: string, job: FakeJob, each: boolean): Line[] {
  const st = readState(dir, job.id);
  const elements = st?.elements ?? [];
  const pending = elements.filter((e) => e.state === 'pending');
  const out: Line[] = [];
  const reason = pendingReason(job, elements);
  if (each) {
    for (const e of pending)
      out.push({ job, id: `${job.id}_${e.index}`, state: 'PD', reason, jobId: job.id });
  } else if (pending.length > 0) {
    const list = slurmList(pending.map((e) => e.index));
    const throttle = job.throttle !== undefined ? `%${job.throttle}` : '';
    const id = pending.length === 1 ? `${job.id}_${pending[0]!.index}` : `${job.id}_[${list}${throttle}]`;
    out.push({ job, id, state: 'PD', reason, jobId: job.id });
  }
  const running = elements.filter((e) => e.state === 'running').sort((a, b) => b.index - a.index);
  for (const e of running) {
    out.push({
      job,
      id: `${job.id}_${e.index}`,
      state: 'R',
      reason: 'None',
      jobId: e.jobId ?? job.id,
      ...(e.started !== undefined ? { started: e.started } : {}),
    });
  }
  return out;
}

function run(args: string[], dir: string): Answer {
  let header = true;
  let each = false;
  let fmt = '%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R';
  let ids: string[] | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '-h' || a === '--noheader') header = false;
    else if (a === '-r' || a === '--array') each = true;
    else if (a === '-j' || a === '--jobs') ids = (args[++i] ?? '').split(',').filter(Boolean);
    else if (a.startsWith('--jobs=')) ids = a.slice(7).split(',').filter(Boolean);
    else if (a === '-o' || a === '--format') fmt = args[++i] ?? '';
    else if (a.startsWith('--format=')) fmt = a.slice(9);
    else if (a === '--me') continue;
    else throw new FakeUsage(`FAKE: option '${a}' is not emulated`);
  }
  const jobs = listJobs(dir, 'slurm');
  let wanted = jobs;
  if (ids !== undefined) {
    const known = new Set(jobs.map((j) => String(j.id)));
    const base = ids.map((x) => x.split('_')[0]!);
    if (base.length === 1 && !known.has(base[0]!)) {
      return { status: 1, stdout: '', stderr: 'slurm_load_jobs error: Invalid job id specified\n' };
    }
    wanted = jobs.filter((j) => base.includes(String(j.id)));
  }
  const all = wanted.flatMap((j) => lines(dir, j, each));
  const body = all
    .filter((l) => ids === undefined || ids.some((x) => x === String(l.job.id) || x === l.id))
    .map((l) => `${format(fmt, l)}\n`)
    .join('');
  const head = header ? `${fmt.replace(/%\.?\d*([a-zA-Z])/g, (_, c: string) => HEADERS[c] ?? c)}\n` : '';
  return { status: 0, stdout: head + body, stderr: '' };
}

export const squeue: Program = {
  run,
  down: {
    status: 1,
    stdout: '',
    stderr: 'slurm_load_jobs error: Unable to contact slurm controller (connect failure)\n',
  },
};
