import path from 'node:path';

/**
 * The FAKE Slurm cluster: one node like the test cluster of scripts/test-cluster/slurm-up.sh (partitions `debug`,
 * the default, and `batch`; 32 CPUs; no GPUs), with settings a test may change through the environment of the
 * commands (sbatch passes it on to the job's controller):
 *
 * - DROVER_FAKE_SLURM_MAX_ARRAY_SIZE — MaxArraySize (default 1001, Slurm's own default);
 * - DROVER_FAKE_SLURM_ACCOUNTING — `jobcomp` (the default: JobCompType=jobcomp/filetxt, as the test cluster),
 *   `sacct` (slurmdbd: sacct answers) or `none`;
 * - DROVER_FAKE_SLURM_SECONDS_PER_MINUTE — how long a minute of `--time` lasts (default 60), so a test of a
 *   time limit waits seconds;
 * - DROVER_FAKE_SLURM_KILL_WAIT — KillWait, seconds from SIGTERM to SIGKILL (default 5).
 */

/** A partition of the fake cluster. */
export interface Partition {
  name: string;
  isDefault: boolean;
}

export const PARTITIONS: Partition[] = [
  { name: 'debug', isDefault: true },
  { name: 'batch', isDefault: false },
];

export const NODE_CPUS = 32;
export const NODE_MEM_MB = 16000;
export const CLUSTER_NAME = 'drover-fake';

/** MaxArraySize of the fake cluster. */
export function maxArraySize(env: NodeJS.ProcessEnv = process.env): number {
  return Number(env.DROVER_FAKE_SLURM_MAX_ARRAY_SIZE ?? 1001);
}

/** Where element ends are recorded. */
export function accountingMode(env: NodeJS.ProcessEnv = process.env): 'jobcomp' | 'sacct' | 'none' {
  const v = env.DROVER_FAKE_SLURM_ACCOUNTING ?? 'jobcomp';
  if (v !== 'jobcomp' && v !== 'sacct' && v !== 'none')
    throw new Error(`DROVER_FAKE_SLURM_ACCOUNTING='${v}': use jobcomp, sacct or none`);
  return v;
}

/** The job completion log of a state folder. */
export function jobcompFile(dir: string): string {
  return path.join(dir, 'jobcomp.log');
}

/** Seconds one minute of `--time` lasts. */
export function secondsPerMinute(env: NodeJS.ProcessEnv = process.env): number {
  return Number(env.DROVER_FAKE_SLURM_SECONDS_PER_MINUTE ?? 60);
}

/** KillWait in seconds. */
export function killWait(env: NodeJS.ProcessEnv = process.env): number {
  return Number(env.DROVER_FAKE_SLURM_KILL_WAIT ?? 5);
}

/** Slurm's local time format (`2026-12-01T20:17:26`) of unix seconds. */
export function slurmTime(unix: number): string {
  const d = new Date(unix * 1000);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/** The answer of any Slurm client while slurmctld is down. */
export function controllerDown(prog: string): string {
  return `${prog}: error: Unable to contact slurm controller (connect failure)\n`;
}
