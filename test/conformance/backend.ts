import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestContext } from 'node:test';
import type { SchedulerCall } from '../helpers/scheduler-calls.js';
import { killLeftovers } from '../helpers/workspace.js';
import { killInside } from '../pool/helpers.js';

/**
 * What the backend conformance scenarios know about a backend under test: how to launch on it, what it supports
 * and how long to wait. The scenarios drive only the real CLI (`node bin/drover.cjs`) with these facts, never
 * drover's internals, so one list of scenarios runs on every backend.
 */

/** A fresh place to run drover on a backend, for one test. */
export interface Site {
  /** The folder drover works in. */
  cwd: string;
  /** Environment of every drover command of the test (a fake scheduler's PATH, a recording shim...). */
  env: Record<string, string | undefined>;
  /** The `drover launch` arguments that choose this backend (`--backend slurm`, `--pool p`). */
  launch: string[];
  /** The arguments that make such a launch return at once (`--detach` for local; the others always do). */
  background: string[];
  /** The scheduler commands drover ran here (none for local and pools). */
  calls(prog?: string): SchedulerCall[];
  /** Run `fn` when the test is over, before what was deferred earlier (a stack). */
  defer(fn: () => Promise<void> | void): void;
}

/** The scheduler behind a cluster backend. */
export interface SchedulerFacts {
  kind: 'slurm' | 'gridengine';
  /** True for the fakes of test/fakes/ (then faults can be injected). */
  fake: boolean;
  submit: 'sbatch' | 'qsub';
  cancel: 'scancel' | 'qdel';
  queue: 'squeue' | 'qstat';
  /** Arguments the scheduler refuses, and what drover's one line must say. */
  badRequest: { args: string[]; says: RegExp };
  /** Arguments after `--` it takes as they are (passed on to sbatch/qsub). */
  extraArgs: string[];
  /** The variable in which an element sees its job id. */
  jobIdVar: 'SLURM_ARRAY_JOB_ID' | 'JOB_ID';
  /** The elements the scheduler lists for a job (`ID_INDEX NAME` / `ID.INDEX NAME`), asked with the site's env. */
  elements(site: Site, jobId: string): string[];
}

/** A backend the scenarios run on. */
export interface BackendUnderTest {
  /** Its name in test titles: local, pool-local, slurm, gridengine, slurm-fake, gridengine-fake. */
  name: string;
  /** What `drover status` calls the launches' backend (`local`, `pool:p`, `slurm`, `gridengine`). */
  recordedAs: string;
  /** Why its tests cannot run here (a cluster that is not up, and CI did not ask for it), or false. */
  skip: string | false;
  /** A real cluster: what is wrong when it does not answer now (undefined: it is up). */
  down?(): string | undefined;
  /** Set for the cluster backends. */
  scheduler?: SchedulerFacts;
  /** True for a pool: tasks go to its workers (2 of 1 slot each), which take no --max-tasks nor --duration. */
  pool: boolean;
  /** Arguments that keep at most `n` tasks running at once (a pool runs as many as its 2 slots). */
  throttle(n: number): string[];
  /** A time limit on each element (clusters) or task (local), and the longest a stop by it takes. */
  limit?: { args: string[]; waitMs: number };
  /** The longest a launch of a few one-second tasks may take to settle here. */
  settleMs: number;
  /** How often to poll `drover status` while waiting. */
  pollMs: number;
  /** How many scenarios may run at once on it. */
  concurrency: number;
  /** Open a fresh site for one test. */
  open(t: TestContext): Promise<Site>;
}

/** A deferred-cleanup stack for a test, run (last in, first out) when the test is over. */
export function cleanupStack(t: TestContext): (fn: () => Promise<void> | void) => void {
  const stack: (() => Promise<void> | void)[] = [];
  t.after(async () => {
    const errors: unknown[] = [];
    while (stack.length > 0) {
      try {
        await stack.pop()!();
      } catch (err) {
        errors.push(err);
      }
    }
    if (errors.length > 0) throw errors[0];
  });
  return (fn) => stack.push(fn);
}

/** A fresh working folder whose leftovers (task processes, runners) are killed and which is removed last. */
export function workFolder(defer: (fn: () => Promise<void> | void) => void, prefix: string): string {
  const cwd = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  defer(async () => {
    await killLeftovers(cwd);
    killInside(cwd);
    if (process.env.DROVER_TEST_KEEP) process.stderr.write(`kept ${cwd}\n`);
    else fs.rmSync(cwd, { recursive: true, force: true });
  });
  return cwd;
}
