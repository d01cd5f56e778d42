import { spawn } from 'node:child_process';
import fs from 'node:fs';

/** What it takes to start one task process. */
export interface SpawnRequest {
  argv: string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Log files for stdout and stderr (created or truncated). */
  out: string;
  err: string;
}

/** How a task process ended: an exit code, or the signal that ended it. */
export interface ProcessExit {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
}

/** A started task process. */
export interface Started {
  /** Its pid, which is also its process group id; null when it could not be started. */
  pid: number | null;
  /** Resolves when it has ended. */
  exited: Promise<ProcessExit>;
}

/**
 * Start a task in its own process group (so a stop reaches everything it started) with stdout and stderr
 * going straight to its log files: no pipes through the runner. A program that cannot be executed ends like
 * it would in a shell: exit 127 with the reason in its stderr log.
 */
export function startProcess(req: SpawnRequest): Started {
  const out = fs.openSync(req.out, 'w');
  const err = fs.openSync(req.err, 'w');
  try {
    const child = spawn(req.argv[0]!, req.argv.slice(1), {
      cwd: req.cwd,
      env: req.env,
      stdio: ['ignore', out, err],
      detached: true,
    });
    const exited = new Promise<ProcessExit>((resolve) => {
      child.once('exit', (exitCode, signal) => resolve({ exitCode, signal }));
      child.once('error', (e: NodeJS.ErrnoException) => {
        if (child.pid !== undefined) return; // an error after start (e.g. kill failed): 'exit' still comes
        fs.appendFileSync(req.err, `drover: cannot execute ${req.argv[0]}: ${e.code ?? e.message}\n`);
        resolve({ exitCode: e.code === 'ENOENT' ? 127 : 126, signal: null });
      });
    });
    return { pid: child.pid ?? null, exited };
  } finally {
    fs.closeSync(out);
    fs.closeSync(err);
  }
}

/** Send `signal` to a task's whole process group; false if it is already gone. */
export function signalGroup(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}
