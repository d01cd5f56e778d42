import fs from 'node:fs';
import path from 'node:path';

/**
 * The state folder of the FAKE schedulers (test/fakes/): every fake command reads and writes it, and the
 * folder is given by DROVER_FAKE_SCHEDULER_DIR (one per test), so tests never share a queue. Layout:
 *
 * - `jobs/<id>/job.json` — a submission (written once by sbatch/qsub), `script` its spooled copy;
 * - `jobs/<id>/state.json` — its elements (written by sbatch/qsub, then only by the job's controller);
 * - `jobs/<id>/requests/`, `acks/` — cancel requests of scancel/qdel and the controller's answers;
 * - `accounting.jsonl` — one line per ended element (qacct, sacct); `jobcomp.log` — Slurm's job completion log;
 * - `calls.jsonl` — every fake command run: program, argv, cwd, exit status and stdout;
 * - `counters/` — how many times each program ran (for faults like `sbatch:refuse@2`).
 */

/** Which scheduler a fake job belongs to. */
export type Scheduler = 'slurm' | 'gridengine';

/** A submission as the fake keeps it: what the controller needs to run the job's elements. */
export interface FakeJob {
  scheduler: Scheduler;
  id: number;
  name: string;
  user: string;
  /** Unix seconds. */
  submitted: number;
  /** Where the elements run. */
  cwd: string;
  /** Where sbatch/qsub ran. */
  submitDir: string;
  /** The spooled copy of the batch script and its arguments. */
  script: string;
  args: string[];
  /** Grid Engine: the shell that runs the script (-S, else /bin/sh). Slurm runs the script itself. */
  shell?: string;
  /** The elements' environment (before the scheduler's own variables). */
  env: Record<string, string>;
  indices: number[];
  /** Most elements running at once (Slurm %N, Grid Engine -tc). */
  throttle?: number;
  /** Time limit of each element in seconds (Slurm --time scaled, Grid Engine h_rt). */
  limitS?: number;
  /** Output path patterns (scheduler syntax); stderr undefined: into stdout's file. */
  stdout: string;
  stderr?: string;
  /** Slurm partition / Grid Engine queue. */
  partition: string;
  /** CPUs (Slurm --cpus-per-task) or slots (Grid Engine -pe) of each element. */
  cpus: number;
  /** Grid Engine -pe name, when given. */
  pe?: string;
  /**
   * Slurm `--signal=B:SIG@T`: SIG to the batch shell (only) T seconds before the time limit, T scaled as the
   * minutes of `--time` are.
   */
  warn?: { signal: NodeJS.Signals; beforeS: number };
  /** Grid Engine -notify: SIGUSR2 before the SIGKILL of a stop. */
  notify: boolean;
  /** Seconds between the stop signal and SIGKILL (Slurm KillWait; Grid Engine the queue's notify time). */
  killWaitS: number;
  /** Milliseconds before a pending element may start (a real scheduler's cycle). */
  startDelayMs: number;
  /** Grid Engine: milliseconds before qacct shows an ended element (DROVER_FAKE_GE_ACCT_DELAY_MS at submission). */
  accountingDelayMs?: number;
  /** Where Slurm element ends are written: the jobcomp log, slurmdbd (sacct), or nowhere. */
  accounting: 'jobcomp' | 'sacct' | 'none';
  /** Elements pend forever (Slurm reason PartitionConfig: more CPUs than a node has). */
  neverRuns?: string;
  /** The submitted time limit as the scheduler shows it (Slurm TimeLimit in minutes). */
  limitText?: string;
  /** Its elements may be run again (Slurm `--requeue`, Grid Engine `-r y`): scontrol requeue, qmod -rj. */
  requeueable?: boolean;
}

/** One array element's life in the fake queue. */
export interface ElementState {
  index: number;
  /** PD/qw pending, R running, Eqw could not start, done ended, removed cancelled while pending. */
  state: 'pending' | 'running' | 'error' | 'done' | 'removed';
  /** Slurm: the element's own job id, given when it starts. */
  jobId?: number;
  pid?: number;
  /** Unix seconds. */
  started?: number;
  ended?: number;
  /** Slurm `--signal`: it was sent. */
  warned?: boolean;
  /** Why it is being stopped, once a stop began. */
  stopping?: 'cancel' | 'timeout';
  /** It is being stopped to run again (scontrol requeue, qmod -rj): once stopped, it pends again. */
  requeueing?: boolean;
  /** How often it was run again (Slurm SLURM_RESTART_COUNT; Grid Engine RESTARTED=1 when any). */
  restarts?: number;
  /** Grid Engine: why it sits in Eqw. */
  error?: string;
}

/** A job's elements, written atomically by one writer at a time. */
export interface JobState {
  elements: ElementState[];
  /** Pid of the job's controller, once it runs. */
  controller?: number;
}

/** One ended element, as accounting (qacct, sacct, jobcomp) reports it. */
export interface AccountingRecord {
  scheduler: Scheduler;
  job: number;
  index: number;
  /** Slurm: the element's own job id. */
  elementJobId?: number;
  name: string;
  partition: string;
  cwd: string;
  user: string;
  submitted: number;
  started?: number;
  ended: number;
  /** Unix seconds from which accounting shows it (Grid Engine's qacct lags behind qstat). */
  visibleAt?: number;
  /** Slurm JobState (COMPLETED, FAILED, CANCELLED, TIMEOUT). */
  state: string;
  exitCode: number;
  signal: number;
  /** Grid Engine: the failure code and its text (0: the script ran to its end). */
  failed: number;
  failedText: string;
  /** Grid Engine: the job script's status (128 + signal when a signal ended it). */
  exitStatus: number;
  limitText?: string;
  slots: number;
}

/** The state folder of this process (DROVER_FAKE_SCHEDULER_DIR); a clear failure when it is not set. */
export function stateDir(env: NodeJS.ProcessEnv = process.env): string {
  const dir = env.DROVER_FAKE_SCHEDULER_DIR;
  if (!dir || !path.isAbsolute(dir)) {
    throw new FakeUsage(
      'this is a FAKE scheduler command for drover’s tests: set DROVER_FAKE_SCHEDULER_DIR to an absolute folder',
    );
  }
  fs.mkdirSync(path.join(dir, 'jobs'), { recursive: true });
  return dir;
}

/** An error a fake command reports as one line on stderr, with its exit status. */
export class FakeUsage extends Error {
  constructor(
    message: string,
    readonly status = 1,
  ) {
    super(message);
  }
}

/** The folder of one job. */
export function jobDir(dir: string, id: number): string {
  return path.join(dir, 'jobs', String(id));
}

/** Write JSON atomically (temp file + rename): readers see the old or the new text, never half of one. */
export function writeJson(file: string, value: unknown): void {
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(value));
  fs.renameSync(tmp, file);
}

/** Read a JSON file, or undefined when it does not exist. */
export function readJson<T>(file: string): T | undefined {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as T;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** Sleep synchronously (the fake commands are short synchronous programs). */
export function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Run `fn` holding the folder's lock (an exclusive mkdir; a lock left by a dead process is broken). */
export function withLock<T>(dir: string, fn: () => T): T {
  const lock = path.join(dir, 'lock');
  for (let i = 0; ; i++) {
    try {
      fs.mkdirSync(lock);
      fs.writeFileSync(path.join(lock, 'pid'), String(process.pid));
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const owner = Number(readText(path.join(lock, 'pid')));
      if (i > 50 && owner > 0 && !alive(owner)) fs.rmSync(lock, { recursive: true, force: true });
      sleepSync(5);
    }
  }
  try {
    return fn();
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

function readText(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/** True while a process exists and is not a zombie. */
export function alive(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** The next number of a counter in the state folder (job ids, invocation counts), under the lock. */
export function nextNumber(dir: string, name: string, first: number): number {
  return withLock(dir, () => {
    const file = path.join(dir, 'counters', name);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const last = Number(readText(file));
    const n = Number.isInteger(last) && last >= first ? last + 1 : first;
    fs.writeFileSync(file, String(n));
    return n;
  });
}

/** Every job of the state folder (optionally of one scheduler), oldest first. */
export function listJobs(dir: string, scheduler?: Scheduler): FakeJob[] {
  let names: string[];
  try {
    names = fs.readdirSync(path.join(dir, 'jobs'));
  } catch {
    return [];
  }
  return names
    .map(Number)
    .filter((n) => Number.isInteger(n))
    .sort((a, b) => a - b)
    .map((id) => readJson<FakeJob>(path.join(jobDir(dir, id), 'job.json')))
    .filter((j): j is FakeJob => j !== undefined && (scheduler === undefined || j.scheduler === scheduler));
}

/** A job's element states (undefined for a job the folder does not have). */
export function readState(dir: string, id: number): JobState | undefined {
  return readJson<JobState>(path.join(jobDir(dir, id), 'state.json'));
}

/** Append one accounting record (an element ended). */
export function appendAccounting(dir: string, rec: AccountingRecord): void {
  fs.appendFileSync(path.join(dir, 'accounting.jsonl'), `${JSON.stringify(rec)}\n`);
}

/** Every accounting record of the folder. */
export function readAccounting(dir: string): AccountingRecord[] {
  return readText(path.join(dir, 'accounting.jsonl'))
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as AccountingRecord);
}

/** The fake's host name, as its elements and outputs show it (the machine's short name). */
export function hostName(): string {
  return (readText('/proc/sys/kernel/hostname').trim() || 'localhost').split('.')[0]!;
}

/** The user running the fake (the submitter). */
export function userName(): string {
  return process.env.USER ?? process.env.LOGNAME ?? (process.getuid?.() === 0 ? 'root' : 'user');
}

/** A new job id (Slurm arrays and their elements, Grid Engine jobs share one sequence, so ids never clash). */
export function nextJobId(dir: string): number {
  return nextNumber(dir, 'job-id', 1000);
}
