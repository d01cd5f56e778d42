import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from './drover.js';
import { testEnv } from './drover-in-process-fake.js';
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

/**
 * True when a pid runs the fake's controller of this state folder (not a reused pid): a controller process of its
 * own, or the server, which runs the controllers of the jobs submitted through it.
 */
function isController(pid: number, dir: string): boolean {
  if (pid === server?.pid && server.exitCode === null && server.signalCode === null) return true;
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
    PATH: `${FAKE_BIN}:${testEnv().PATH ?? ''}`,
    DROVER_FAKE_SCHEDULER_DIR: dir,
    DROVER_FAKE_NODE: process.execPath,
  };
  serve(dir);
  t.after(async () => {
    const live = () => processesOf(dir).filter((j) => isController(j.controller, dir));
    const cancel = kind === 'slurm' ? 'scancel' : 'qdel';
    const ids = live().map((j) => j.id);
    if (ids.length > 0)
      spawnSync(path.join(FAKE_BIN, cancel), ids, { env: { ...testEnv(), ...env }, timeout: 30_000 });
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
      if (j.controller !== server?.pid) signal(j.controller);
    }
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

/** The fake schedulers' server of this test process (test/fakes/serve.ts), once its first fake started it. */
let server: ChildProcess | undefined;

/**
 * Have the fake schedulers' server of this test process answer state folder `dir`, starting the server with the
 * first fake (one Node start for all of a test file's fakes): the fake commands ask it once it has written its
 * port into `dir`, and run a Node process of their own until then. When this test process has nothing left to
 * do, it closes the server's stdin and waits for it to end (so that it and the elements it ran are reaped by,
 * and count as CPU of, this file); the server exits once its jobs' controllers have. Its stdin closes as well
 * when this process ends any other way. Its stderr (a crash) is the test's.
 */
function serve(dir: string): void {
  if (!server || server.exitCode !== null || server.signalCode !== null) {
    const main = path.join(repoRoot, 'dist', 'test', 'fakes', 'main.js');
    const child = spawn(process.execPath, [main, 'serve'], {
      cwd: os.tmpdir(),
      env: testEnv(),
      stdio: ['pipe', 'ignore', 'inherit'],
    });
    child.unref();
    (child.stdin as unknown as { unref(): void }).unref();
    process.once('beforeExit', () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.ref();
      child.stdin!.end();
    });
    server = child;
  }
  server.stdin!.write(`${dir}\n`);
}

function signal(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // gone
  }
}
