import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { childEnv, droverBin, type RunOptions, type RunResult } from './drover.js';

/** How a measured drover run went: its result, its peak memory, and whether the hang guard stopped it. */
export interface Measured extends RunResult {
  /** Peak resident memory of the drover process (VmHWM), in MiB, as last read before it ended. */
  peakMib: number;
  /** True when it ran past the guard and was killed. */
  hung: boolean;
  /** Bytes it wrote to stdout. */
  stdoutBytes: number;
}

/** Options of a measured run. */
export interface MeasureOptions extends RunOptions {
  /** Kill it after this long (a hang guard: generous on purpose, it is not a speed check). Default 20 s. */
  guardMs?: number;
  /** Count stdout without keeping it (output of hundreds of MB). */
  countOnly?: boolean;
  /** Close our end of its stdout once this many bytes came (a reader that stops early, like `head`). */
  closeAfterBytes?: number;
}

/** VmHWM (peak resident set) of a process in MiB, or undefined once it is gone. */
function peakMib(pid: number): number | undefined {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Run drover, reading its peak memory every few milliseconds, and kill it if it runs past the hang guard. Tells a
 * command that expanded or buffered something (hundreds of MB) from one that did not (Node's own ~60 MB).
 */
export async function runMeasured(args: readonly string[], opts: MeasureOptions): Promise<Measured> {
  const child = spawn(process.execPath, [droverBin, ...args], {
    cwd: opts.cwd,
    env: childEnv(opts.env),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error('could not start drover');
  let stdout = '';
  let stdoutBytes = 0;
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => {
    stdoutBytes += d.length;
    if (!opts.countOnly && opts.closeAfterBytes === undefined) stdout += d.toString('utf8');
    if (opts.closeAfterBytes !== undefined && stdoutBytes >= opts.closeAfterBytes) child.stdout!.destroy();
  });
  child.stderr!.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
  });
  child.stdin!.on('error', () => {});
  child.stdin!.end(opts.input ?? '');
  let peak = 0;
  let hung = false;
  const poll = setInterval(() => {
    peak = Math.max(peak, peakMib(pid) ?? 0);
  }, 5);
  const guard = setTimeout(() => {
    hung = true;
    child.kill('SIGKILL');
  }, opts.guardMs ?? 20_000);
  try {
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (c, s) => resolve([c, s]));
    });
    // stderr may still be in the pipe when it exits
    await new Promise<void>((r) =>
      child.stderr!.readableEnded ? r() : child.stderr!.once('end', () => r()),
    );
    return { code, signal, stdout, stderr, peakMib: peak, hung, stdoutBytes };
  } finally {
    clearInterval(poll);
    clearTimeout(guard);
  }
}
