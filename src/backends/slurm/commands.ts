import { execFile, spawnSync } from 'node:child_process';
import { DroverError, usageError } from '../../errors.js';

/**
 * Running Slurm's client commands: always an argv array (never a shell string), with a time limit, and errors
 * shaped as DroverError. Synchronous calls serve reconcile and cancel (they run inside a ledger transaction);
 * the asynchronous one serves submission.
 */

/** How a Slurm command ended. */
export interface SlurmRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Seconds a Slurm client command may take before drover gives up on it. */
const TIMEOUT_MS = 60_000;

function notInstalled(cmd: string): DroverError {
  return usageError(
    `'${cmd}' was not found: --backend slurm needs Slurm's client commands on PATH (run drover on a Slurm login node)`,
  );
}

/** Run a Slurm command to its end (synchronously); a missing command is a usage error. */
export function slurmSync(cmd: string, args: readonly string[]): SlurmRun {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: TIMEOUT_MS, maxBuffer: 256 * 1024 * 1024 });
  if (r.error) {
    if ((r.error as NodeJS.ErrnoException).code === 'ENOENT') throw notInstalled(cmd);
    throw new DroverError('backend', `${cmd} failed: ${r.error.message}`, { cause: r.error });
  }
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Run a Slurm command (asynchronously); a missing command is a usage error. */
export function slurmAsync(cmd: string, args: readonly string[]): Promise<SlurmRun> {
  return new Promise((resolve, reject) => {
    execFile(
      cmd,
      args,
      { encoding: 'utf8', timeout: TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err?.killed) {
          reject(
            new DroverError(
              'backend',
              `${cmd} gave no answer within ${TIMEOUT_MS / 1000} s: is the Slurm controller up? Try again later`,
              { cause: err },
            ),
          );
          return;
        }
        if (err && typeof err.code === 'string') {
          if (err.code === 'ENOENT') reject(notInstalled(cmd));
          else reject(new DroverError('backend', `${cmd} failed: ${err.message}`, { cause: err }));
          return;
        }
        resolve({ status: err ? (typeof err.code === 'number' ? err.code : null) : 0, stdout, stderr });
      },
    );
  });
}

/** The last meaningful line of a command's stderr, without the `sbatch: error: ` style prefixes. */
export function lastErrorLine(stderr: string): string {
  const lines = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !/^Try ".* --help"/.test(l));
  const line = lines[lines.length - 1] ?? '';
  return line.replace(/^[a-z]+: (error: )?/, '').replace(/^Batch job submission failed: /, '');
}

/** A failed Slurm command as a backend error naming it and its message. */
export function commandError(cmd: string, r: SlurmRun): DroverError {
  const why = lastErrorLine(r.stderr) || `exit status ${r.status}`;
  return new DroverError('backend', `${cmd} failed: ${why}`);
}
