import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/**
 * A recording shim, not a fake: `node recording-shim.js REAL LOG ARGS...` runs the real scheduler program REAL
 * with ARGS (same stdin, same exit status, its output passed through) and appends the run to LOG in the fakes'
 * calls.jsonl format. Put on PATH in front of the real sbatch/qsub/scancel/qdel (see real-scheduler.ts), it
 * shows exactly which argv a launch gave them, so a test can compare it with what `--dry-run` printed, and how
 * often drover asked the queue (squeue, qstat) and accounting (sacct, qacct).
 */
function main(): number {
  const [real, log, ...args] = process.argv.slice(2);
  if (!real || !log) {
    process.stderr.write('usage: recording-shim REAL_PROGRAM LOG_FILE ARGS...\n');
    return 2;
  }
  const r = spawnSync(real, args, {
    argv0: path.basename(real),
    stdio: ['inherit', 'pipe', 'pipe'],
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024, // a queue of many elements
  });
  process.stdout.write(r.stdout ?? '');
  process.stderr.write(r.stderr ?? '');
  const call = {
    prog: path.basename(real),
    argv: args,
    cwd: process.cwd(),
    at: Date.now() / 1000,
    status: r.status,
    stdout: r.stdout ?? '',
    stderr: r.stderr ?? '',
  };
  fs.appendFileSync(log, `${JSON.stringify(call)}\n`);
  if (r.error) return 127;
  return r.status ?? 128;
}

process.exitCode = main();
