import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { testEnv } from './drover-in-process-fake.js';
import { readCalls, type SchedulerCall, submittedId } from './scheduler-calls.js';
import { waitFor } from './workspace.js';

/**
 * A real test cluster (scripts/test-cluster/slurm-up.sh, gridengine-up.sh) seen through recording shims: the
 * test's drover runs sbatch/scancel (qsub/qdel) through shims that log every argv, then the real programs. After
 * the test exactly the jobs those shims saw submitted are cancelled — never anyone else's on the shared cluster.
 */

/** Which scheduler. */
export type SchedulerKind = 'slurm' | 'gridengine';

/** Where a test's scheduler commands go, and what they were. */
export interface SchedulerSite {
  /** Environment for every drover command of the test. */
  env: Record<string, string>;
  /** The scheduler commands drover ran, oldest first (only `prog`'s when given). */
  calls(prog?: string): SchedulerCall[];
}

/** The programs a test's drover runs through the shims: submit and cancel, and the queue and accounting readers. */
const PROGRAMS: Record<SchedulerKind, { submit: string; cancel: string; queue: string; accounting: string }> =
  {
    slurm: { submit: 'sbatch', cancel: 'scancel', queue: 'squeue', accounting: 'sacct' },
    gridengine: { submit: 'qsub', cancel: 'qdel', queue: 'qstat', accounting: 'qacct' },
  };

/** True when Slurm answers and its node can run jobs. */
export function slurmUp(): boolean {
  const known = upFromRunner('DROVER_TEST_SLURM_UP');
  if (known !== undefined) return known;
  const r = spawnSync('sinfo', ['-h', '-o', '%T'], { encoding: 'utf8', timeout: 10_000 });
  return r.status === 0 && /\b(idle|mixed|allocated|completing)\b/.test(r.stdout);
}

/**
 * What scripts/test.mjs found when it asked the cluster once for the whole run ('1' up, '0' not): a test file
 * need not ask again (`sinfo` takes 9 s to give up on a slurmctld that is not running), or undefined. '-': the
 * runner started this file without asking, as its CLUSTERS does not list it; asking here would cost each such
 * file those 9 s and run it among the rest while it drives a cluster, so that is an error naming the fix.
 */
function upFromRunner(name: string): boolean | undefined {
  const v = process.env[name];
  if (v === '-') {
    throw new Error(
      `${process.argv[1] ?? 'this test file'} asks whether a real cluster is up, but scripts/test.mjs does not ` +
        'list it in CLUSTERS: add it there (it then waits for the answer, and runs alone when the cluster is up)',
    );
  }
  return v === '1' ? true : v === '0' ? false : undefined;
}

/** True when Grid Engine's qmaster answers and lists a queue instance. */
export function gridEngineUp(): boolean {
  const known = upFromRunner('DROVER_TEST_GRIDENGINE_UP');
  if (known !== undefined) return known;
  const r = spawnSync('qstat', ['-f'], { encoding: 'utf8', timeout: 10_000 });
  return r.status === 0 && /@/.test(r.stdout);
}

/**
 * The `skip` of a real cluster's tests, by the project's convention: a visible reason when the cluster is not up,
 * unless DROVER_TEST_SLURM=1 / DROVER_TEST_GRIDENGINE=1 (CI), where the tests run and a missing cluster fails them.
 */
export function clusterSkip(kind: SchedulerKind): string | false {
  if (kind === 'slurm') {
    return process.env.DROVER_TEST_SLURM === '1' || slurmUp()
      ? false
      : 'no Slurm: run scripts/test-cluster/slurm-up.sh';
  }
  return process.env.DROVER_TEST_GRIDENGINE === '1' || gridEngineUp()
    ? false
    : 'no Grid Engine: run scripts/test-cluster/gridengine-up.sh';
}

/** The path of a program on PATH (the real one: the shims are not on this process's PATH). */
function which(prog: string): string {
  for (const d of (testEnv().PATH ?? '').split(':')) {
    const p = path.join(d, prog);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return p;
    } catch {
      // not here
    }
  }
  throw new Error(`${prog} is not on PATH`);
}

const q = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;

/** Cancel the given jobs on the real cluster and wait until it no longer lists them. */
async function cancelJobs(kind: SchedulerKind, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  if (kind === 'slurm') {
    spawnSync(which('scancel'), ids, { timeout: 30_000 });
    await waitFor(
      'the test’s Slurm jobs to leave the queue',
      () =>
        spawnSync('squeue', ['-h', '-j', ids.join(','), '-o', '%i'], { encoding: 'utf8' }).stdout.trim() ===
        '',
      60_000,
      250,
    );
  } else {
    for (const id of ids) spawnSync(which('qdel'), [id], { timeout: 30_000 });
    await waitFor(
      'the test’s Grid Engine jobs to leave the queue',
      () => ids.every((id) => spawnSync('qstat', ['-j', id], { encoding: 'utf8' }).status !== 0),
      90_000,
      500,
    );
  }
}

/** Shims in front of the real cluster's programs for one test; after it, the jobs they submitted are cancelled. */
export function realScheduler(
  t: { after(fn: () => Promise<void>): void },
  kind: SchedulerKind,
): SchedulerSite {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `drover-shim-${kind}-`));
  const bin = path.join(dir, 'bin');
  const log = path.join(dir, 'calls.jsonl');
  fs.mkdirSync(bin);
  const shim = path.join(path.dirname(fileURLToPath(import.meta.url)), 'recording-shim.js');
  for (const prog of Object.values(PROGRAMS[kind])) {
    const body = `#!/bin/sh\n# Recording shim (not a fake): logs the call, runs the real ${prog}.\nexec ${q(process.execPath)} ${q(shim)} ${q(which(prog))} ${q(log)} "$@"\n`;
    fs.writeFileSync(path.join(bin, prog), body, { mode: 0o755 });
  }
  const calls = (prog?: string) => readCalls(log).filter((c) => prog === undefined || c.prog === prog);
  t.after(async () => {
    const ids = calls(PROGRAMS[kind].submit)
      .map(submittedId)
      .filter((x): x is string => x !== undefined);
    try {
      await cancelJobs(kind, [...new Set(ids)]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
  return { env: { PATH: `${bin}:${testEnv().PATH ?? ''}` }, calls };
}
