import { type SpawnSyncReturns, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root, from dist/bench/ (compiled) two levels up. */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** The `drover` entry script of this checkout. */
export const DROVER_BIN = path.join(REPO_ROOT, 'bin', 'drover.cjs');
/** The Node that runs the benchmark also runs drover and the `node -e` references. */
export const NODE = process.execPath;

/** One timed process run. */
export interface Run {
  ms: number;
  /**
   * CPU time (user + system) of the process and every descendant it waited for, ms (Linux; NaN elsewhere).
   * Much steadier than wall time on a busy machine: it is what the work costs, not how long it waited for a core.
   */
  cpuMs: number;
  status: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
}

/** A failed run or a failed check: the benchmark's figure cannot be trusted. */
export class BenchError extends Error {}

let clockTicks: number | undefined;

/** CPU time of this process's waited-for children so far (cutime + cstime of /proc/self/stat), ms. */
function childrenCpuMs(): number {
  try {
    if (clockTicks === undefined) {
      const r = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
      clockTicks = Number(r.stdout) > 0 ? Number(r.stdout) : 100;
    }
    const stat = fs.readFileSync('/proc/self/stat', 'utf8');
    // Fields after the command name's closing parenthesis start at field 3; cutime is 16, cstime 17.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(f[13]) + Number(f[14])) * 1000) / clockTicks;
  } catch {
    return Number.NaN;
  }
}

/**
 * Options of `run`: `timeoutMs` (default 10 minutes) turns a hung command into a BenchError; `stdoutFile` sends the
 * command's standard output to that file (as `CMD > FILE`) instead of a pipe this process reads, so a command
 * that prints megabytes is timed without this process's reading and decoding of them (`stdout` is then '').
 */
export interface RunOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  input?: string;
  timeoutMs?: number;
  stdoutFile?: string;
}

/** A command that runs longer than this is taken as hung: SIGKILLed and reported. */
export const DEFAULT_TIMEOUT_MS = 10 * 60 * 1000;

/** Run a command to completion and time it (wall clock, spawn to exit; and CPU time of its process tree). */
export function run(cmd: string, args: readonly string[], opts: RunOptions = {}): Run {
  const timeout = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const out = opts.stdoutFile === undefined ? 'pipe' : fs.openSync(opts.stdoutFile, 'w');
  let r: SpawnSyncReturns<string>;
  let ms: number;
  let cpuMs: number;
  try {
    const cpu0 = childrenCpuMs();
    const t0 = process.hrtime.bigint();
    r = spawnSync(cmd, args, {
      cwd: opts.cwd,
      env: opts.env ?? process.env,
      encoding: 'utf8',
      maxBuffer: 512 * 1024 * 1024,
      stdio: [opts.input === undefined ? 'ignore' : 'pipe', out, 'pipe'],
      timeout,
      killSignal: 'SIGKILL',
      ...(opts.input === undefined ? {} : { input: opts.input }),
    });
    ms = Number(process.hrtime.bigint() - t0) / 1e6;
    cpuMs = childrenCpuMs() - cpu0;
  } finally {
    if (typeof out === 'number') fs.closeSync(out);
  }
  if ((r.error as NodeJS.ErrnoException | undefined)?.code === 'ETIMEDOUT') {
    const what = [cmd, ...args.slice(0, 3)].join(' ');
    throw new BenchError(`${what} ... did not end in ${timeout / 1000} s (hung?): killed`);
  }
  if (r.error) throw new BenchError(`could not run ${cmd}: ${r.error.message}`);
  return { ms, cpuMs, status: r.status, signal: r.signal, stdout: r.stdout ?? '', stderr: r.stderr };
}

/** Like `run`, but a non-zero exit is a BenchError naming the command and the end of its stderr. */
export function runOk(label: string, cmd: string, args: readonly string[], opts: RunOptions = {}): Run {
  const r = run(cmd, args, opts);
  if (r.status !== 0) {
    const tail = r.stderr.trim().split('\n').slice(-3).join(' | ');
    throw new BenchError(`${label} exited ${r.status ?? r.signal}: ${tail}`);
  }
  return r;
}

let configHome: string | undefined;

/**
 * The environment drover runs with: the user's, minus DROVER_DIR (so `.drover/` is in the temp cwd), with an
 * empty XDG_CONFIG_HOME so a global drover config of the person running the benchmark changes nothing.
 */
export function droverEnv(): NodeJS.ProcessEnv {
  if (configHome === undefined) configHome = tempDir('config');
  const env: NodeJS.ProcessEnv = { ...process.env, XDG_CONFIG_HOME: configHome };
  delete env.DROVER_DIR;
  return env;
}

/** Run `drover ARGS` in `cwd`; a non-zero exit is a BenchError. `opts.stdoutFile`: see RunOptions. */
export function drover(
  args: readonly string[],
  cwd: string,
  timeoutMs?: number,
  opts: { stdoutFile?: string } = {},
): Run {
  return runOk(`drover ${args.slice(0, 2).join(' ')}`, NODE, [DROVER_BIN, ...args], {
    cwd,
    env: droverEnv(),
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    ...opts,
  });
}

const made: string[] = [];

/** A fresh empty folder under the system temp folder, removed by `cleanupTemp` at the latest. */
export function tempDir(name: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `drover-bench-${name}-`));
  made.push(dir);
  return dir;
}

/** Remove a folder made by `tempDir` now (benchmarks make thousands of log files per run). */
export function removeDir(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
}

/**
 * Milliseconds to create 1000 empty files in a fresh folder. On an ext4 mounted with `discard` (these VMs),
 * creating files gets 10–40× slower for a while after many files were deleted, and the benchmark sides that
 * write a log file per task suffer most; the harness measures this before and after, and warns.
 */
export function fileCreateMs(): number {
  const dir = tempDir('probe');
  const t0 = performance.now();
  for (let i = 0; i < 1000; i++) fs.closeSync(fs.openSync(path.join(dir, String(i)), 'w'));
  // Left for cleanupTemp at the end: deleting them now would slow the next benchmark's file creation.
  return performance.now() - t0;
}

/** Above this, `fileCreateMs` says the disk is in its slow state (normally 20–60 ms here). */
export const SLOW_FILE_CREATE_MS = 250;

/** Remove every folder `tempDir` made. */
export function cleanupTemp(): void {
  for (const dir of made) removeDir(dir);
  made.length = 0;
}

/** The path of an executable on PATH, or undefined. */
export function which(cmd: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const p = path.join(dir, cmd);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      if (fs.statSync(p).isFile()) return p;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** The newest modification time (ms) of the files under `dir`, or 0 when there are none. */
function newestMtime(dir: string): number {
  let newest = 0;
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    newest = Math.max(newest, e.isDirectory() ? newestMtime(p) : fs.statSync(p).mtimeMs);
  }
  return newest;
}

/**
 * A warning when the built drover looks older than its sources (the benchmark would measure old code), or
 * undefined. `npm run bench` builds first; `node dist/bench/run.js` alone does not.
 */
export function staleBuildWarning(): string | undefined {
  const compiled = newestMtime(path.join(REPO_ROOT, 'dist', 'src'));
  if (compiled === 0) return 'drover is not built: run npm run build (npm run bench does)';
  const bundle = path.join(REPO_ROOT, 'dist', 'drover.cjs');
  const built = fs.existsSync(bundle) ? Math.min(compiled, fs.statSync(bundle).mtimeMs) : compiled;
  if (newestMtime(path.join(REPO_ROOT, 'src')) > built)
    return 'the build is older than src/: run npm run build first (npm run bench does), or this measures old code';
  return undefined;
}

/** The median of some samples (mean of the two middle ones for an even count). */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/**
 * Run each side `repeat` times, in an order rotated every repetition, each run in a fresh folder. The folders are
 * removed only after the last run: on this machine's ext4 (mounted with `discard`), creating files is up to 20×
 * slower for about ten seconds after thousands of files are deleted, so removing a run's logs right away would
 * penalise whichever side runs next.
 */
export function runSides<S>(
  sides: readonly S[],
  repeat: number,
  name: string,
  fn: (side: S, dir: string, repetition: number) => void,
): void {
  const dirs: string[] = [];
  try {
    for (let i = 0; i < repeat; i++) {
      for (const s of rotated(sides, i)) {
        const dir = tempDir(name);
        dirs.push(dir);
        fn(s, dir, i);
      }
    }
  } finally {
    for (const dir of dirs) removeDir(dir);
  }
}

/** `items` rotated left by `i`: the order of the sides in repetition i, so no side always runs first. */
export function rotated<T>(items: readonly T[], i: number): T[] {
  const k = items.length === 0 ? 0 : i % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

/** A duration for people: `48.3 ms`, `7.52 s`. */
export function fmtMs(ms: number): string {
  if (!Number.isFinite(ms)) return '-';
  return ms < 1000 ? `${ms.toFixed(1)} ms` : `${(ms / 1000).toFixed(2)} s`;
}

/** A ratio for people: `2.47×`. */
export function fmtRatio(r: number | undefined): string {
  return r === undefined || !Number.isFinite(r) ? '-' : `${r.toFixed(2)}×`;
}

/** 1..n as strings. */
export function range(n: number): string[] {
  return Array.from({ length: n }, (_, i) => String(i + 1));
}

/** Progress for the person running the benchmark (stderr, so stdout is the results only). */
export function progress(msg: string): void {
  process.stderr.write(`  · ${msg}\n`);
}

/** Wait `ms` without returning to the event loop (the harness is synchronous). */
export function sleepMs(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** True while process `pid` runs (not a zombie). */
export function alive(pid: number): boolean {
  try {
    return fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z';
  } catch {
    return false;
  }
}
