import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from './drover.js';
import type { SchedulerKind, SchedulerSite } from './real-scheduler.js';
import { readCalls } from './scheduler-calls.js';
import { isAlive, waitFor } from './workspace.js';

/**
 * A FAKE scheduler for one test (test/fakes/): its programs first on PATH, its own state folder, and settings
 * that make a test fast (a Slurm minute of --time lasts 2 s, KillWait 1 s, Grid Engine's notify time 2 s). After
 * the test every job still queued is cancelled through the fake's own scancel/qdel, and the test fails if a job's
 * controller or element process is still alive 20 s later (the fake, like drover, must leave nothing running).
 */

/** Settings of a fake (DROVER_FAKE_* variables, see test/fakes/slurm/cluster.ts and gridengine/cluster.ts). */
export type FakeSettings = Record<string, string>;

/** The defaults that keep a test on the fake short. */
export const FAST: FakeSettings = {
  DROVER_FAKE_SLURM_SECONDS_PER_MINUTE: '2',
  DROVER_FAKE_SLURM_KILL_WAIT: '1',
  DROVER_FAKE_GE_NOTIFY: '2',
};

/** The folder of the fake programs (`sbatch`, `qsub`, ... that run dist/test/fakes/main.js). */
export const FAKE_BIN = path.join(repoRoot, 'test', 'fakes', 'bin');

/** A fake scheduler site: its environment, its call log, and its state folder. */
export interface FakeSchedulerSite extends SchedulerSite {
  dir: string;
}

interface Controlled {
  id: string;
  controller: number;
  elements: number[];
}

/** Jobs of a state folder with the pids of their controllers and element processes. */
function processesOf(dir: string): Controlled[] {
  const jobs = path.join(dir, 'jobs');
  let names: string[] = [];
  try {
    names = fs.readdirSync(jobs);
  } catch {
    return [];
  }
  return names.map((id) => {
    let state: { controller?: number; elements?: { pid?: number; state: string }[] } = {};
    try {
      state = JSON.parse(fs.readFileSync(path.join(jobs, id, 'state.json'), 'utf8'));
    } catch {
      // being written
    }
    let pidFile = 0;
    try {
      pidFile = Number(fs.readFileSync(path.join(jobs, id, 'controller.pid'), 'utf8'));
    } catch {
      // not started yet
    }
    return {
      id,
      controller: state.controller ?? pidFile,
      elements: (state.elements ?? []).filter((e) => e.state === 'running' && e.pid).map((e) => e.pid!),
    };
  });
}

/** True when a pid runs the fake's controller of this state folder (not a reused pid). */
function isController(pid: number, dir: string): boolean {
  try {
    return isAlive(pid) && fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(dir);
  } catch {
    return false;
  }
}

/** A fake `kind` scheduler for the test `t`. */
export function fakeScheduler(
  t: { after(fn: () => Promise<void>): void },
  kind: SchedulerKind,
  settings: FakeSettings = {},
): FakeSchedulerSite {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `drover-fake-${kind}-`)));
  const env: Record<string, string> = {
    ...FAST,
    ...settings,
    PATH: `${FAKE_BIN}:${process.env.PATH ?? ''}`,
    DROVER_FAKE_SCHEDULER_DIR: dir,
    DROVER_FAKE_NODE: process.execPath,
  };
  const server = startServer(dir);
  t.after(async () => {
    const live = () => processesOf(dir).filter((j) => isController(j.controller, dir));
    const cancel = kind === 'slurm' ? 'scancel' : 'qdel';
    const ids = live().map((j) => j.id);
    if (ids.length > 0)
      spawnSync(path.join(FAKE_BIN, cancel), ids, { env: { ...process.env, ...env }, timeout: 30_000 });
    const gone = await waitFor(
      'the fake scheduler’s jobs to end',
      () => live().length === 0,
      20_000,
      200,
    ).then(
      () => true,
      () => false,
    );
    const left = live();
    for (const j of left) {
      for (const pid of j.elements) signal(-pid);
      signal(j.controller);
    }
    await server.stop();
    if (!process.env.DROVER_TEST_KEEP) fs.rmSync(dir, { recursive: true, force: true });
    if (!gone)
      throw new Error(
        `fake ${kind} jobs ${left.map((j) => j.id).join(', ')} were still running after the test`,
      );
  });
  return {
    dir,
    env,
    calls: (prog?: string) =>
      readCalls(path.join(dir, 'calls.jsonl')).filter((c) => !prog || c.prog === prog),
  };
}

/**
 * Start the fake's server for state folder `dir` (test/fakes/serve.ts): the fake commands ask it once it has
 * written its port, and run a Node process of their own until then. It ends when `stop` closes its stdin, or when
 * this test process ends, however it ends (its stdin closes then too).
 */
function startServer(dir: string): { stop(): Promise<void> } {
  const log = fs.openSync(path.join(dir, 'server.log'), 'a');
  const main = path.join(repoRoot, 'dist', 'test', 'fakes', 'main.js');
  const child = spawn(process.execPath, [main, 'serve', dir], { cwd: dir, stdio: ['pipe', 'ignore', log] });
  fs.closeSync(log);
  child.unref();
  (child.stdin as unknown as { unref(): void }).unref();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    async stop() {
      child.stdin!.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

function signal(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // gone
  }
}
