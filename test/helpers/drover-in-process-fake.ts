import { AsyncLocalStorage } from 'node:async_hooks';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import type net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { answerText, listenForCalls } from '../fakes/call.js';

/**
 * A FAKE of the process boundary: `drover` commands run inside the test's own process instead of as a process of
 * their own. On this project's 2-core VM a drover process costs ~150–200 ms of CPU, nearly all of it starting Node
 * and loading the bundle, and the same command run here costs ~20 ms; the test suite runs ~2,000 such commands.
 * It is the developer's loop's fast twin only: the test runner turns it on (DROVER_TEST_CLI=in-process) unless
 * CI runs (`.ci/run` says DROVER_TEST_CLI=process), so every scenario also runs against real processes there.
 *
 * A command runs in-process only when a process of it would share nothing but what is handed over here: its
 * folder (the process's working directory, changed for the command's length), its environment and arguments
 * (process.env and process.argv, changed likewise), its standard output and error (the writes made in the
 * command's asynchronous context are kept for it) and its exit code. Each command gets a fresh instance of the
 * bundle, so nothing a module keeps (a cache, a `--no-color`) outlives it, and the ledgers it opened are closed
 * when it ends, as its process's exit would close them. Everything else runs as a process: a command that serves,
 * follows or waits, leaves a process behind, reads standard input, is started in its own session, or starts while
 * another runs here (commands run at once are how the tests check concurrent drover invocations).
 */

/** Commands that run to their end here as in a process of their own. */
const SHORT_COMMANDS = new Set([
  'launch',
  'pool',
  'status',
  'list',
  'results',
  'logs',
  'history',
  'config',
  'prelaunch',
  'completion',
  'cancel',
]);

/**
 * Words that make a command wait (following a log or a launch, waiting for a cancel to take) or leave a process
 * running after it (a detached runner, or a launch waiting for another in the background), which would be the
 * test's child here, not init's: killed, it would stay a zombie until the test's process reaps it.
 */
const PROCESS_WORDS = new Set(['-f', '--follow', '--wait', '--detach']);

type Instance = () => {
  exports: { runCommand(argv: string[], facts: { version: string; bin: string }): Promise<void> };
};

/** What the twin needs once per test process: a maker of bundle instances, and where output is kept. */
interface Twin {
  instance: Instance;
  version: string;
  output: AsyncLocalStorage<{ stdout: string; stderr: string }>;
  opened: Set<{ open: boolean; close(): void }>;
}

let twin: Twin | undefined;
let busy = false;
/** The test process's own environment while a command runs here (process.env is the command's meanwhile). */
let ownEnv: NodeJS.ProcessEnv | undefined;

/**
 * The test process's own environment: process.env, except while a command runs here, when process.env is that
 * command's and the test's code that runs meanwhile (another scenario's, a poll) must not take it for its own.
 */
export function testEnv(): NodeJS.ProcessEnv {
  return ownEnv ?? process.env;
}
/** Queued commands waiting for the one running here. */
const waiting: (() => void)[] = [];

function setUp(bin: string): Twin {
  if (twin) return twin;
  const require = createRequire(bin);
  const loader = require('./load-bundle.cjs') as { bundleLoader(): Instance };
  const { version } = require('../package.json') as { version: string };
  const output = new AsyncLocalStorage<{ stdout: string; stderr: string }>();
  for (const name of ['stdout', 'stderr'] as const) {
    const stream = process[name];
    const write = stream.write.bind(stream) as (...a: unknown[]) => boolean;
    stream.write = ((chunk: unknown, encoding?: unknown, cb?: unknown): boolean => {
      const kept = output.getStore();
      if (kept === undefined) return write(chunk, encoding, cb);
      kept[name] += typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8');
      const done = typeof encoding === 'function' ? encoding : cb;
      if (typeof done === 'function') process.nextTick(done as () => void);
      return true;
    }) as typeof stream.write;
  }
  // The ledgers a command opens are closed when it ends, as its process's exit would close them (an open one
  // keeps its WAL: a process that finds it would see another connection).
  const sqlite = require.resolve('better-sqlite3');
  const Database = require(sqlite) as new (...a: unknown[]) => { open: boolean; close(): void };
  const opened = new Set<{ open: boolean; close(): void }>();
  class ClosedAtCommandEnd extends Database {
    constructor(...a: unknown[]) {
      super(...a);
      if (output.getStore() !== undefined) opened.add(this);
    }
  }
  require.cache[sqlite]!.exports = ClosedAtCommandEnd;
  twin = { instance: loader.bundleLoader(), version, output, opened };
  return twin;
}

/** Whether `args` name a command the twin runs. */
function short(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  const words = end < 0 ? args : args.slice(0, end);
  if (words.includes('-')) return false;
  if (words.some((w) => PROCESS_WORDS.has(w) || w.startsWith('--wait='))) return false;
  return SHORT_COMMANDS.has(words[0] ?? '');
}

/** Make process.env exactly `env`, in place (Node's environment object, so children and TZ see it). */
function setEnv(env: NodeJS.ProcessEnv): void {
  for (const key of Object.keys(process.env)) if (!(key in env)) delete process.env[key];
  for (const [key, value] of Object.entries(env)) if (value !== undefined) process.env[key] = value;
}

/**
 * Run `drover ...args` in this process when the twin is on and can; undefined when it must run as a process.
 */
export function runInProcessFake(
  args: readonly string[],
  how: { cwd: string; env: NodeJS.ProcessEnv; input?: string; setsid?: boolean; queue?: boolean },
  bin: string,
): Promise<{ code: number; signal: null; stdout: string; stderr: string }> | undefined {
  if (process.env.DROVER_TEST_CLI !== 'in-process') return undefined;
  if (how.setsid === true || (how.input ?? '') !== '' || !short(args)) return undefined;
  if (busy && how.queue !== true) return undefined;
  const { instance, version, output, opened } = setUp(bin);
  const kept = { stdout: '', stderr: '' };
  const run = async () => {
    while (busy) await new Promise<void>((resolve) => waiting.push(resolve));
    busy = true;
    const cwd = process.cwd();
    const env = { ...process.env };
    ownEnv = env;
    const argv = process.argv;
    const exitCode = process.exitCode;
    const ttys = [process.stdout, process.stderr].filter((s) => s.isTTY === true);
    try {
      process.chdir(how.cwd);
      setEnv(how.env);
      for (const s of ttys) s.isTTY = false;
      process.argv = [process.execPath, bin, ...args];
      process.exitCode = undefined;
      const { exports } = instance();
      await output.run(kept, () => exports.runCommand([...args], { version, bin }));
      return { code: Number(process.exitCode ?? 0), signal: null, ...kept } as const;
    } finally {
      for (const db of opened) if (db.open) db.close();
      opened.clear();
      process.exitCode = exitCode;
      process.argv = argv;
      for (const s of ttys) s.isTTY = true;
      setEnv(env);
      ownEnv = undefined;
      process.chdir(cwd);
      busy = false;
      waiting.shift()?.();
    }
  };
  return run();
}

/** The twin served to programs that start `drover` themselves: the environment that sends them to it. */
export interface ServedFake {
  /** DROVER_BIN (the shim) and what the shim needs; hand it to the program. */
  env: Record<string, string>;
  close(): Promise<void>;
}

/**
 * Serve the twin to a program that starts `drover` itself (the Python client's tests): with `env` it runs
 * test/helpers/drover-in-process-fake.bash as drover, which hands its folder, arguments and environment to this
 * process over loopback TCP and prints the command's output and exits with its code; a command the twin does not
 * run here (see runInProcessFake: one at a time, short ones only) the shim runs as a drover process. Undefined
 * when the twin is off (CI): the program then runs drover itself.
 */
export async function serveInProcessFake(bin: string): Promise<ServedFake | undefined> {
  if (process.env.DROVER_TEST_CLI !== 'in-process') return undefined;
  const errors = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-twin-'));
  let replies = 0;
  const server = await listenForCalls(async (call) => {
    const run = runInProcessFake(call.args, { cwd: call.cwd, env: call.env }, bin);
    if (!run) return 'exec -\n';
    const r = await run;
    return answerText({ ...r, status: r.code }, () => path.join(errors, `stderr.${++replies}`));
  });
  server.unref();
  const { port } = server.address() as net.AddressInfo;
  return {
    env: {
      DROVER_BIN: path.join(path.dirname(bin), '..', 'test', 'helpers', 'drover-in-process-fake.bash'),
      DROVER_TWIN_PORT: String(port),
      DROVER_TWIN_NODE: process.execPath,
      DROVER_TWIN_BIN: bin,
    },
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      fs.rmSync(errors, { recursive: true, force: true });
    },
  };
}
