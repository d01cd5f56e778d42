import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { DroverError } from '../../errors.js';
import { isProcessAlive, processStartTime, shortHostname } from '../../util/proc.js';
import { parseSize } from '../../util/size.js';
import type { LaunchRequest } from '../backend.js';
import type { WorkerArray } from '../cluster/workers.js';
import { shellQuote } from '../cluster/wrapper.js';
import { cancelGridEngineWorkers, submitGridEngineWorkers } from '../gridengine/workers.js';
import { cancelSlurmWorkers, submitSlurmWorkers } from '../slurm/workers.js';

/**
 * Start and stop a pool's workers on its backend: N local processes, or ONE Slurm array (`sbatch --array=1-N`)
 * or Grid Engine array job (`qsub -t 1-N`; more only past the site's array limit) whose elements each run one
 * `drover worker`, submitted by the backend's own client (slurm/workers.ts, gridengine/workers.ts).
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
  /** Scheduler options given to `pool create`: partition, account, qos, queue. */
  options: Record<string, string>;
  /** The backend's section of drover's config (defaults for those, Grid Engine's resource names). */
  config: Record<string, string>;
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

/** Start `count` more workers; returns their handles. Cluster workers go through their backend's one client. */
export async function startWorkers(s: WorkerSpec, count: number): Promise<WorkerHandle[]> {
  fs.mkdirSync(s.dir, { recursive: true });
  if (s.backend === 'local') return startLocal(s, count);
  const script = path.join(s.dir, 'worker.sh');
  const cmd = [s.node, s.bin, ...workerArgs(s)].map(shellQuote).join(' ');
  fs.writeFileSync(script, `#!/bin/bash\n# Written by drover: one worker of pool ${s.pool}.\nexec ${cmd}\n`, {
    mode: 0o755,
  });
  const array: WorkerArray = {
    pool: s.pool,
    count,
    script,
    cwd: s.cwd,
    logDir: s.dir,
    request: workerRequest(s),
    config: s.config,
  };
  const kind = s.backend;
  const jobs = kind === 'slurm' ? await submitSlurmWorkers(array) : await submitGridEngineWorkers(array);
  return jobs.map((j) => ({ kind, ...j }));
}

/**
 * What each worker asks its scheduler for, as a launch of one task per element would: the pool's resources, and
 * its partition/account/qos (Slurm) or queue (Grid Engine), else those of the backend's config section.
 */
export function workerRequest(s: WorkerSpec): LaunchRequest {
  const o = s.options;
  const pick = (k: string, config = k) => o[k] ?? s.config[config];
  const partition = s.backend === 'gridengine' ? o.queue : pick('partition');
  return {
    cpus: s.cpus,
    ...(s.gpus > 0 ? { gpus: s.gpus } : {}),
    ...(s.mem !== undefined ? { memMb: memMb(s.mem) } : {}),
    ...(s.duration !== undefined ? { duration: s.duration } : {}),
    tasksPerNode: 1,
    ...(partition ? { partition } : {}),
    ...(pick('account') ? { account: pick('account')! } : {}),
    ...(s.backend === 'slurm' && pick('qos') ? { qos: pick('qos')! } : {}),
    extraArgs: [],
  };
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

/**
 * Stop what the handles started, after the workers were asked to leave: SIGTERM to local worker processes
 * still alive (only the pids we started, checked by start time), `scancel`/`qdel` of our own array job ids.
 */
export async function stopWorkers(handles: readonly WorkerHandle[]): Promise<void> {
  const jobs = (kind: WorkerHandle['kind']) =>
    handles.flatMap((h) => (h.kind === kind && h.kind !== 'local' ? [h.job] : []));
  for (const h of handles) {
    if (h.kind === 'local' && h.host === shortHostname() && isProcessAlive(h.pid, h.pid_start)) {
      try {
        process.kill(h.pid, 'SIGTERM');
      } catch {
        // gone meanwhile
      }
    }
  }
  await Promise.all([cancelSlurmWorkers(jobs('slurm')), cancelGridEngineWorkers(jobs('gridengine'))]);
}

/** True when some local worker process of the handles is still alive. */
export function localWorkersAlive(handles: readonly WorkerHandle[]): boolean {
  return handles.some(
    (h) => h.kind === 'local' && h.host === shortHostname() && isProcessAlive(h.pid, h.pid_start),
  );
}
