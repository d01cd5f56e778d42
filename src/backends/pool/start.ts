import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { DroverError } from '../../errors.js';
import { isProcessAlive, processStartTime, shortHostname } from '../../util/proc.js';
import { parseSize } from '../../util/size.js';
import { shellQuote } from '../cluster/wrapper.js';

/**
 * Start and stop a pool's workers on its backend: N local processes, or ONE Slurm array (`sbatch --array=1-N`)
 * or Grid Engine array job (`qsub -t 1-N`) whose elements each run one `drover worker`. Argv arrays only.
 */

/** What a pool's workers are started with. */
export interface WorkerSpec {
  pool: string;
  backend: 'local' | 'slurm' | 'gridengine';
  /** Controller URL the workers connect to. */
  url: string;
  tokenFile: string;
  /** The controller's server.json: workers re-read the URL from it when the controller is away. */
  serverFile: string;
  cpus: number;
  gpus: number;
  mem?: string;
  /** Seconds (scheduler time limit). */
  duration?: number;
  slots: number;
  setup?: string;
  /** Scheduler options: partition, account, qos, queue, pe. */
  options: Record<string, string>;
  /** The working folder (the controller's). */
  cwd: string;
  /** Where worker logs and wrapper scripts go. */
  dir: string;
  /** Node and the drover entry script. */
  node: string;
  bin: string;
  heartbeat: number;
}

/** A handle of started workers: local pids or a scheduler job id. */
export type WorkerHandle =
  | { kind: 'local'; host: string; pid: number; pid_start: string | null }
  | { kind: 'slurm'; job: string; count: number }
  | { kind: 'gridengine'; job: string; count: number };

/** The `drover worker` arguments of a pool's workers. */
export function workerArgs(s: WorkerSpec): string[] {
  const args = [
    'worker',
    '--server',
    s.url,
    '--token-file',
    s.tokenFile,
    '--server-file',
    s.serverFile,
    '--pool',
    s.pool,
    '--cpus',
    String(s.cpus),
    '--gpus',
    String(s.gpus),
    '--slots',
    String(s.slots),
  ];
  if (s.mem !== undefined) args.push('--mem', s.mem);
  if (s.setup !== undefined) args.push('--setup', s.setup);
  return args;
}

/** Start `count` more workers; returns their handles. */
export function startWorkers(s: WorkerSpec, count: number): WorkerHandle[] {
  fs.mkdirSync(s.dir, { recursive: true });
  if (s.backend === 'local') return startLocal(s, count);
  const script = path.join(s.dir, 'worker.sh');
  const cmd = [s.node, s.bin, ...workerArgs(s)].map(shellQuote).join(' ');
  fs.writeFileSync(script, `#!/bin/bash\n# Written by drover: one worker of pool ${s.pool}.\nexec ${cmd}\n`, {
    mode: 0o755,
  });
  return s.backend === 'slurm' ? [submitSlurm(s, script, count)] : [submitGridEngine(s, script, count)];
}

function startLocal(s: WorkerSpec, count: number): WorkerHandle[] {
  const out: WorkerHandle[] = [];
  for (let i = 0; i < count; i++) {
    const log = fs.openSync(path.join(s.dir, `worker-${Date.now()}-${i}.log`), 'a');
    const child = spawn(s.node, [s.bin, ...workerArgs(s)], {
      cwd: s.cwd,
      detached: true,
      stdio: ['ignore', log, log],
      env: { ...process.env, DROVER_WORKER_PARENT: String(process.pid) },
    });
    fs.closeSync(log);
    child.unref();
    if (child.pid === undefined) throw new DroverError('backend', 'could not start a local worker process');
    out.push({
      kind: 'local',
      host: shortHostname(),
      pid: child.pid,
      pid_start: processStartTime(child.pid),
    });
  }
  return out;
}

/** MiB of a --mem text, in drover's one size grammar (util/size.ts); a usage error when it is not one. */
function memMb(mem: string): number {
  return parseSize(mem, '--mem');
}

/** Memory text (e.g. `4G`) in MiB, or 0 when not given. */
export function parseMemMb(mem: string | undefined): number {
  return mem === undefined ? 0 : memMb(mem);
}

function hms(seconds: number): string {
  const s = Math.ceil(seconds);
  return `${Math.floor(s / 3600)}:${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}`;
}

function run(cmd: string, args: string[]): string {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new DroverError('backend', `${cmd} failed: ${(e.stderr ?? e.message).trim().split('\n')[0]}`, {
      cause: err,
    });
  }
}

function submitSlurm(s: WorkerSpec, script: string, count: number): WorkerHandle {
  const args = [
    '--parsable',
    `--array=1-${count}`,
    `--job-name=drover-pool-${s.pool}`,
    `--chdir=${s.cwd}`,
    `--output=${path.join(s.dir, 'slurm-%A_%a.log')}`,
    `--cpus-per-task=${s.cpus}`,
  ];
  if (s.mem !== undefined) args.push(`--mem=${memMb(s.mem)}M`);
  if (s.duration !== undefined) args.push(`--time=${hms(s.duration)}`);
  if (s.gpus > 0) args.push(`--gres=gpu:${s.gpus}`);
  for (const k of ['partition', 'account', 'qos'] as const)
    if (s.options[k]) args.push(`--${k}=${s.options[k]}`);
  args.push(script);
  const job = run('sbatch', args).split(';')[0]!;
  return { kind: 'slurm', job, count };
}

function submitGridEngine(s: WorkerSpec, script: string, count: number): WorkerHandle {
  const args = ['-terse', '-t', `1-${count}`, '-N', `drover-pool-${s.pool}`, '-wd', s.cwd, '-j', 'y'];
  args.push('-o', path.join(s.dir, 'sge-$JOB_ID.$TASK_ID.log'), '-S', '/bin/bash');
  if (s.cpus > 1) args.push('-pe', s.options.pe ?? 'smp', String(s.cpus));
  if (s.mem !== undefined) args.push('-l', `${s.options.mem_resource ?? 'h_vmem'}=${memMb(s.mem)}M`);
  if (s.duration !== undefined) args.push('-l', `h_rt=${hms(s.duration)}`);
  if (s.gpus > 0) args.push('-l', `${s.options.gpu_resource ?? 'gpu'}=${s.gpus}`);
  if (s.options.queue) args.push('-q', s.options.queue);
  args.push(script);
  const job = run('qsub', args).split('.')[0]!;
  return { kind: 'gridengine', job, count };
}

/**
 * Stop what the handles started, after the workers were asked to leave: SIGTERM to local worker processes
 * still alive (only the pids we started, checked by start time), `scancel`/`qdel` of our own array job ids.
 */
export function stopWorkers(handles: readonly WorkerHandle[]): void {
  for (const h of handles) {
    if (h.kind === 'local') {
      if (h.host === shortHostname() && isProcessAlive(h.pid, h.pid_start)) {
        try {
          process.kill(h.pid, 'SIGTERM');
        } catch {
          // gone meanwhile
        }
      }
    } else if (h.kind === 'slurm') {
      try {
        run('scancel', [h.job]);
      } catch {
        // already finished
      }
    } else {
      try {
        run('qdel', [h.job]);
      } catch {
        // already finished
      }
    }
  }
}

/** True when some local worker process of the handles is still alive. */
export function localWorkersAlive(handles: readonly WorkerHandle[]): boolean {
  return handles.some(
    (h) => h.kind === 'local' && h.host === shortHostname() && isProcessAlive(h.pid, h.pid_start),
  );
}
