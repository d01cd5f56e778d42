import { execFile, spawnSync } from 'node:child_process';
import { DroverError, usageError } from '../../errors.js';
import { condenseBlocks } from '../../tasklist/tasklist.js';

/**
 * Grid Engine's client commands, run with argv arrays (never a shell). Every call is synchronous: reconcile
 * and cancel run inside a ledger transaction.
 */

/** How a client command ended. */
export interface CommandResult {
  /** Exit code; null when it could not be run or was killed. */
  code: number | null;
  stdout: string;
  stderr: string;
  /** Set when the command could not be started (ENOENT: Grid Engine's clients are not on PATH). */
  error?: NodeJS.ErrnoException;
}

/** Seconds any one client call may take before it is given up (a hung qmaster must not hang drover). */
const TIMEOUT_S = 120;

/** How every client call runs: stdin closed, both outputs read whole, given up after TIMEOUT_S. */
const OPTIONS = { encoding: 'utf8', maxBuffer: 1024 * 1024 * 1024, timeout: TIMEOUT_S * 1000 } as const;

/** Run one Grid Engine client command. */
export function runCommand(cmd: string, args: readonly string[], cwd?: string): CommandResult {
  const r = spawnSync(cmd, args, { ...OPTIONS, stdio: ['ignore', 'pipe', 'pipe'], ...(cwd ? { cwd } : {}) });
  return {
    code: r.status,
    stdout: r.stdout ?? '',
    stderr: r.stderr ?? '',
    ...(r.error ? { error: r.error as NodeJS.ErrnoException } : {}),
  };
}

/** The same without holding the event loop (the controller submits pool workers so). */
export function runCommandAsync(cmd: string, args: readonly string[], cwd?: string): Promise<CommandResult> {
  return new Promise((resolve) => {
    const child = execFile(cmd, args, { ...OPTIONS, ...(cwd ? { cwd } : {}) }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : null) : 0;
      let error: NodeJS.ErrnoException | undefined;
      if (err?.killed) {
        error = Object.assign(new Error(`${cmd} gave no answer within ${TIMEOUT_S} s`), {
          code: 'ETIMEDOUT',
        });
      } else if (err && typeof err.code !== 'number') error = err as NodeJS.ErrnoException;
      resolve({ code, stdout, stderr, ...(error ? { error } : {}) });
    });
    child.stdin?.end();
  });
}

/** The useful part of a client's complaint, on one line ("Unable to run job: ...", without "Exiting."). */
export function oneLine(r: CommandResult): string {
  if (r.error?.code === 'ENOENT') return 'command not found';
  if (r.error) return r.error.message;
  const text = `${r.stderr}\n${r.stdout}`
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && l !== 'Exiting.')
    .join(' ');
  return text || `exit ${r.code}`;
}

/** True when the failure is Grid Engine being unreachable rather than a refused request. */
function unreachable(r: CommandResult): boolean {
  return (
    r.error !== undefined ||
    /commlib error|unable to contact qmaster|can't connect|cell directory/i.test(r.stderr)
  );
}

/**
 * `qsub ARGS` → the job id (`-terse` prints `3.1-20:1` for arrays, a whole line). A refused request is a usage
 * error; a submission whose answer is not a whole job id is a backend error that says how to find the job.
 */
export function qsub(args: readonly string[], cwd: string, what = 'the submission'): string {
  return qsubJob(runCommand('qsub', args, cwd), what);
}

/** The same without holding the event loop. */
export async function qsubAsync(args: readonly string[], cwd: string, what: string): Promise<string> {
  return qsubJob(await runCommandAsync('qsub', args, cwd), what);
}

/** The job id of a qsub's answer, or the error its failure is (`what` it submitted names the refusal). */
function qsubJob(r: CommandResult, what: string): string {
  const id = /(?:^|\n)([0-9]+)(?:\.[0-9]+-[0-9]+:[0-9]+)?\n$/.exec(r.stdout)?.[1];
  if (r.code === 0 && id !== undefined) return id;
  if (r.code === 0) {
    throw new DroverError(
      'backend',
      `qsub submitted a job but printed no whole job id ('${r.stdout.trim()}'): find it with qstat and qdel it`,
    );
  }
  const why = oneLine(r);
  if (r.error?.code === 'ENOENT')
    throw new DroverError('backend', 'qsub not found: Grid Engine’s client commands must be on PATH');
  if (unreachable(r)) throw new DroverError('backend', `Grid Engine did not answer qsub: ${why}`);
  throw usageError(`Grid Engine refused ${what}: ${why}`);
}

/** `qdel JOB [-t RANGE]`; an already gone job counts as deleted. Returns what went wrong, or undefined. */
export function qdel(job: string, range?: string): string | undefined {
  const r = runCommand('qdel', range === undefined ? [job] : [job, '-t', range]);
  if (r.code === 0 || /does not exist|not found/i.test(r.stderr + r.stdout)) return undefined;
  return oneLine(r);
}

/** What became of a qdel of some elements: all deleted, or the first failure and the elements not reached. */
export interface QdelOutcome<E> {
  /** Grid Engine's message (one line) of the first qdel that failed. */
  failure?: string;
  /** The elements of that call and of those not made after it. */
  unreached: E[];
}

/**
 * `qdel JOB -t first-last:step` for each block of these elements, one call per block, in order; the first that
 * fails ends it (with Grid Engine unreachable, every further call would only wait to fail too).
 */
export function qdelElements<E extends { job: string; index: number }>(
  elements: readonly E[],
): QdelOutcome<E> {
  const byJob = new Map<string, number[]>();
  for (const e of elements) {
    const list = byJob.get(e.job);
    if (list) list.push(e.index);
    else byJob.set(e.job, [e.index]);
  }
  const calls: { job: string; first: number; last: number; step: number }[] = [];
  for (const [job, indices] of byJob) for (const b of condenseBlocks(indices)) calls.push({ job, ...b });
  for (const [n, c] of calls.entries()) {
    const failure = qdel(c.job, `${c.first}-${c.last}:${c.step}`);
    if (failure === undefined) continue;
    const left = calls.slice(n);
    const inLeft = (e: E) =>
      left.some(
        (x) =>
          x.job === e.job && e.index >= x.first && e.index <= x.last && (e.index - x.first) % x.step === 0,
      );
    return { failure, unreached: elements.filter(inLeft) };
  }
  return { unreached: [] };
}

/** `qstat -xml` of the caller's jobs, or undefined when Grid Engine cannot be asked. */
export function qstatXml(): string | undefined {
  const r = runCommand('qstat', ['-xml']);
  return r.code === 0 ? r.stdout : undefined;
}

/** `qstat -j JOB` (with its per-task error reasons), or undefined. */
export function qstatJob(job: string): string | undefined {
  const r = runCommand('qstat', ['-j', job]);
  return r.code === 0 ? r.stdout : undefined;
}

/** `qacct -j JOB -t RANGE`, or undefined when there is no record (yet) or no accounting. */
export function qacct(job: string, range: string): string | undefined {
  const r = runCommand('qacct', ['-j', job, '-t', range]);
  return r.code === 0 ? r.stdout : undefined;
}
