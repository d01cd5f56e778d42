import { type ChildProcess, spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runInProcessFake, testEnv } from './drover-in-process-fake.js';

/** The repository root: this file runs from dist/test/helpers/. */
export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** The real `drover` entry script. */
export const droverBin = path.join(repoRoot, 'bin', 'drover.cjs');

/** How a drover process ended and what it printed. */
export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Where and how to run drover. */
export interface RunOptions {
  /** The folder drover works in (its `.drover/` goes here). */
  cwd: string;
  /** Extra environment; a value of undefined removes the variable. */
  env?: Record<string, string | undefined>;
  /** Text for stdin (stdin is a pipe, never a TTY). */
  input?: string;
  /** Start it in its own session and process group, as `setsid drover ...` does (for group signals). */
  setsid?: boolean;
  /**
   * In the developer's loop, a short command that finds another running in this process waits for it there
   * rather than starting a process: for commands that overlap others only by chance (scenarios run side by
   * side), never for the tests of drover invocations at once.
   */
  queue?: boolean;
}

/** A drover process running in the background. */
export interface Started {
  child: ChildProcess;
  pid: number;
  /** Resolves when it has ended. */
  result: Promise<RunResult>;
}

/** The environment of a drover child: ours without settings that would leak into the test's folder. */
export function childEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...testEnv() };
  delete env.DROVER_DIR;
  delete env.CUDA_VISIBLE_DEVICES;
  delete env.NODE_TEST_CONTEXT;
  delete env.DROVER_DEBUG;
  // No global config from the user running the tests: point it at a folder that does not exist.
  env.XDG_CONFIG_HOME = path.join(os.tmpdir(), 'drover-test-no-global-config');
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

/** How a command is run: RunOptions with its environment made (childEnv). */
interface Made {
  cwd: string;
  env: NodeJS.ProcessEnv;
  input?: string | undefined;
  setsid?: boolean | undefined;
  queue?: boolean | undefined;
}

/** RunOptions made into how the command runs. */
function made(opts: RunOptions): Made {
  return {
    cwd: opts.cwd,
    env: childEnv(opts.env),
    input: opts.input,
    setsid: opts.setsid,
    queue: opts.queue,
  };
}

/** Start `node bin/drover.cjs ...args` in the background. */
export function startDrover(args: readonly string[], opts: RunOptions): Started {
  return spawnDrover(args, made(opts));
}

function spawnDrover(args: readonly string[], opts: Made): Started {
  const child = spawn(process.execPath, [droverBin, ...args], {
    cwd: opts.cwd,
    env: opts.env,
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: opts.setsid === true,
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => {
    stdout += d;
  });
  child.stderr!.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
  });
  child.stdin!.on('error', () => {});
  child.stdin!.end(opts.input ?? '');
  const result = new Promise<RunResult>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  if (child.pid === undefined) throw new Error('could not start drover');
  return { child, pid: child.pid, result };
}

/**
 * Run `node bin/drover.cjs ...args` to its end; in the developer's loop a short command runs in this process
 * instead (drover-in-process-fake.ts: a fake of the process boundary, never in CI).
 */
export function runDrover(args: readonly string[], opts: RunOptions): Promise<RunResult> {
  const how = made(opts);
  return runInProcessFake(args, how, droverBin) ?? spawnDrover(args, how).result;
}

/** Run drover expecting exit 0: its stdout; throws with its stderr otherwise. */
export async function droverOk(args: readonly string[], opts: RunOptions): Promise<string> {
  const r = await runDrover(args, opts);
  if (r.code !== 0) throw new Error(`drover ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return r.stdout;
}

/** Run drover expecting exit 0 and JSON on stdout; throws with its stderr otherwise. */
export async function droverJson<T = unknown>(args: readonly string[], opts: RunOptions): Promise<T> {
  return JSON.parse(await droverOk(args, opts)) as T;
}

/** Lines of a text without the trailing empty one. */
export function lines(text: string): string[] {
  return text.split('\n').filter((l, i, all) => !(l === '' && i === all.length - 1));
}

/**
 * Wait until `drover watch JOB --json` prints a status that `done` accepts, and return it: one drover process
 * follows the job where a poll would start one per look. A watcher ends with its launch; when one ends (or
 * cannot start: no launch yet) before a status is accepted, another is started after a pause, until the
 * deadline. The failure names what was awaited and the last status seen.
 */
export async function watchStatus<T>(
  job: string,
  opts: RunOptions,
  done: (s: T) => boolean,
  timeoutMs: number,
  what: (last: T | undefined) => string,
  intervalMs?: number,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  const every = intervalMs !== undefined ? ['--interval', String(intervalMs / 1000)] : [];
  let last: T | undefined;
  let lastEnd = '';
  for (let pause = 200; ; pause = Math.min(2 * pause, 2_000)) {
    const w = startDrover(['watch', job, '--json', ...every], opts);
    let buffered = '';
    let accepted: T | undefined;
    const found = new Promise<void>((resolve) => {
      w.child.stdout!.on('data', (d: string) => {
        buffered += d;
        for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
          const line = buffered.slice(0, nl);
          buffered = buffered.slice(nl + 1);
          if (accepted !== undefined) continue;
          last = JSON.parse(line) as T;
          if (done(last)) {
            accepted = last;
            resolve();
          }
        }
      });
    });
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
    });
    await Promise.race([found, late, w.result]);
    clearTimeout(timer);
    if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGTERM');
    const end = await w.result;
    if (accepted !== undefined) return accepted;
    if (end.code !== 0 && end.code !== 1 && end.signal === null)
      lastEnd = `; drover watch exited ${end.code}: ${end.stderr.trim()}`;
    if (Date.now() >= deadline) throw new Error(`gave up waiting for ${what(last)}${lastEnd}`);
    await new Promise((r) => setTimeout(r, Math.min(pause, Math.max(0, deadline - Date.now()))));
  }
}
