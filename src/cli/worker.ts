import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { usageError } from '../errors.js';
import { droverDir } from '../paths.js';
import { readTokenFile } from '../protocol/client.js';
import { COUNTS, SECONDS } from '../util/limits.js';
import { quoted } from '../util/quote.js';
import { Worker } from '../worker/worker.js';
import { durationOption, intOption, sizeOption } from './parse.js';

interface WorkerFlags {
  server?: string;
  serverFile?: string;
  tokenFile?: string;
  pool: string;
  cpus?: number;
  gpus?: number;
  /** MiB. */
  mem?: number;
  slots?: number;
  setup?: string;
  patience: number;
  /** False with --no-shared-fs. */
  sharedFs: boolean;
  localDir?: string;
}

/** Register `drover worker`: a pool worker (started by `drover pool`, or by hand on any host that reaches the server). */
export function registerWorker(program: Command): void {
  program
    .command('worker')
    .description(
      'run tasks of a pool: register with the server, take tasks as slots free up, report every attempt',
    )
    .requiredOption('--pool <name>', 'the pool to serve')
    .option('--server <url>', 'the controller’s URL (default: DROVER_SERVER)')
    .option('--server-file <path>', 're-read the URL from this server.json when the controller comes back')
    .option(
      '--token-file <path>',
      'a worker token (drover server token create --worker; default: DROVER_TOKEN)',
    )
    .option('--cpus <n>', 'CPUs it offers (default: those available to it)', intOption('--cpus', COUNTS.cpus))
    .option('--gpus <n>', 'GPUs it offers (default: CUDA_VISIBLE_DEVICES)', intOption('--gpus', COUNTS.gpus))
    .option('--mem <size>', 'memory it offers, e.g. 16G (default: not tracked)', sizeOption('--mem'))
    .option('--slots <n>', 'tasks at once (default: --cpus)', intOption('--slots', COUNTS.slots))
    .option('--setup <cmd>', 'run this once before taking tasks; a failure makes the worker leave')
    .option(
      '--patience <s>',
      'give up after the server was unreachable this long',
      durationOption('--patience', SECONDS.patience),
      600,
    )
    .option(
      '--no-shared-fs',
      'this host does not see the server’s folder: keep task logs and results here and send them to the server',
    )
    .option('--local-dir <path>', 'with --no-shared-fs: the folder for them (default: .drover/ here)')
    .action(async (opts: WorkerFlags) => {
      if (opts.localDir !== undefined && opts.sharedFs)
        throw usageError(
          '--local-dir goes with --no-shared-fs (with a shared filesystem, logs go to the server’s folder)',
        );
      if (opts.localDir !== undefined) checkLocalDir(opts.localDir);
      const url = opts.server ?? process.env.DROVER_SERVER;
      if (!url) throw usageError('drover worker needs --server URL (or DROVER_SERVER)');
      const token = opts.tokenFile !== undefined ? readTokenFile(opts.tokenFile) : process.env.DROVER_TOKEN;
      if (!token)
        throw usageError('drover worker needs --token-file PATH (or DROVER_TOKEN) with a worker token');
      const worker = new Worker({
        url: url.replace(/\/+$/, ''),
        ...(opts.serverFile !== undefined ? { serverFile: opts.serverFile } : {}),
        token,
        pool: opts.pool,
        ...(opts.cpus !== undefined ? { cpus: opts.cpus } : {}),
        ...(opts.gpus !== undefined ? { gpus: opts.gpus } : {}),
        ...(opts.mem !== undefined ? { memMb: opts.mem } : {}),
        ...(opts.slots !== undefined ? { slots: opts.slots } : {}),
        ...(opts.setup !== undefined ? { setup: opts.setup } : {}),
        dir: path.join(
          opts.sharedFs ? droverDir() : path.resolve(opts.localDir ?? droverDir()),
          'pools',
          opts.pool,
          'workers',
        ),
        patience: opts.patience,
        sharedFs: opts.sharedFs,
        log: (msg) => process.stderr.write(`${new Date().toISOString()} drover worker: ${msg}\n`),
      });
      let signals = 0;
      const stop = () => {
        if (++signals > 1) process.exit(143);
        worker.terminate();
      };
      process.on('SIGTERM', stop);
      process.on('SIGINT', stop);
      process.exitCode = await worker.run();
    });
}

/** `--local-dir`: a folder, or a path one can be made at (an empty value or a file is refused, exit 2). */
function checkLocalDir(dir: string): void {
  if (dir.trim() === '')
    throw usageError(
      `--local-dir ${quoted(dir)} is empty: give the folder for this worker's logs and results`,
    );
  let st: fs.Stats | undefined;
  try {
    st = fs.statSync(dir);
  } catch {
    return; // made when the worker starts
  }
  if (!st.isDirectory())
    throw usageError(
      `--local-dir ${quoted(dir)} is not a folder: give a folder for this worker's logs and results`,
    );
}
