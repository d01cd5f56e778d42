import type { Command } from 'commander';
import { call, connect, type ServerFlags } from '../backends/pool/client.js';
import { usageError } from '../errors.js';
import { droverPaths } from '../paths.js';
import type { CreatePoolRequest, PoolStatus } from '../protocol/messages.js';
import { COUNTS, SECONDS } from '../util/limits.js';
import { formatSize } from '../util/size.js';
import { note, printJson, printTable } from './output.js';
import { durationOption, intOption, sizeOption } from './parse.js';
import { type AutoFlags, autoOptions, autoRequest } from './pool-auto.js';
import { printPoolStatus } from './pool-print.js';

interface CreateFlags extends ServerFlags, AutoFlags {
  workers?: number;
  backend: string;
  cpus: number;
  gpus: number;
  /** MiB. */
  mem?: number;
  /** Seconds. */
  duration?: number;
  /** Seconds: --duration's name in HyperQueue's words. */
  timeLimit?: number;
  slots?: number;
  setup?: string;
  partition?: string;
  account?: string;
  qos?: string;
  queue?: string;
  json?: boolean;
}

const serverOptions = (c: Command) =>
  c
    .option('--server <url>', 'the controller (default: .drover/server/server.json, or DROVER_SERVER)')
    .option('--token-file <path>', 'a user token (default: .drover/server/token, or DROVER_TOKEN)');

/** Register `drover pool create|status|scale|down|list`. */
export function registerPool(program: Command): void {
  const pool = program
    .command('pool')
    .description('pools of pre-started workers (needs drover server; docs/pools.md)');
  const create = serverOptions(
    pool
      .command('create')
      .description('create a pool and start its workers (local processes, or one Slurm / Grid Engine array)')
      .argument('<name>', 'the pool')
      .option('--workers <n>', 'how many workers (or --auto)', intOption('--workers', COUNTS.workers))
      .option('--backend <name>', 'where the workers run: local, slurm, gridengine', 'local')
      .option('--cpus <n>', 'CPUs per worker', intOption('--cpus', COUNTS.cpus), 1)
      .option('--gpus <n>', 'GPUs per worker', intOption('--gpus', COUNTS.gpus), 0)
      .option('--mem <size>', 'memory per worker, e.g. 16G', sizeOption('--mem'))
      .option(
        '--duration <time>',
        'how long each worker may live (scheduler time limit), e.g. 4:00:00',
        durationOption('--duration', SECONDS.limit),
      )
      .option(
        '--time-limit <time>',
        'the same as --duration (HyperQueue’s name)',
        durationOption('--time-limit', SECONDS.limit),
      )
      .option('--slots <n>', 'tasks at once per worker (default: --cpus)', intOption('--slots', COUNTS.slots))
      .option('--setup <cmd>', 'run once by each worker before it takes tasks')
      .option('--partition <name>', 'Slurm partition')
      .option('--account <name>', 'Slurm account')
      .option('--qos <name>', 'Slurm QOS')
      .option('--queue <name>', 'Grid Engine queue'),
  );
  autoOptions(create);
  create.option('--json', 'print the pool as JSON').action(async (name: string, opts: CreateFlags) => {
    if (!['local', 'slurm', 'gridengine'].includes(opts.backend)) {
      throw usageError(`--backend '${opts.backend}' is not a pool backend: use local, slurm or gridengine`);
    }
    const auto = autoRequest(opts);
    if (opts.workers === undefined && !auto)
      throw usageError('pool create needs --workers N, or --auto to start workers as tasks queue');
    if (opts.timeLimit !== undefined && opts.duration !== undefined && opts.timeLimit !== opts.duration)
      throw usageError('--time-limit and --duration are the same limit: give one of them');
    const duration = opts.duration ?? opts.timeLimit;
    const options: Record<string, string> = {};
    for (const k of ['partition', 'account', 'qos', 'queue'] as const) if (opts[k]) options[k] = opts[k]!;
    const req: CreatePoolRequest = {
      name,
      backend: opts.backend as CreatePoolRequest['backend'],
      workers: opts.workers ?? 0,
      cpus: opts.cpus,
      gpus: opts.gpus,
      ...(opts.mem !== undefined ? { mem: formatSize(opts.mem) } : {}),
      ...(duration !== undefined ? { duration } : {}),
      ...(opts.slots !== undefined ? { slots: opts.slots } : {}),
      ...(opts.setup !== undefined ? { setup: opts.setup } : {}),
      options,
      ...(auto ? { auto } : {}),
    };
    const api = connect(droverPaths(), opts);
    const p = await call<PoolStatus>(api, 'POST', '/pools', req);
    if (opts.json) printJson(p);
    else if (p.auto)
      note(
        `pool ${name}: up to ${p.auto.max_workers} worker(s) on ${opts.backend}, started as tasks queue; see drover pool status ${name}`,
      );
    else
      note(
        `pool ${name}: starting ${opts.workers} worker(s) on ${opts.backend}; see drover pool status ${name}`,
      );
  });
  serverOptions(
    pool
      .command('status')
      .description('a pool’s live workers: state, free slots, current tasks (every pool without a name)')
      .argument('[name]', 'the pool')
      .option('--all', 'also the workers that were lost or left, with the reason')
      .option('--json', 'print JSON'),
  ).action(async (name: string | undefined, opts: ServerFlags & { json?: boolean; all?: boolean }) => {
    const api = connect(droverPaths(), opts);
    if (name === undefined) {
      const rows = await call<{ name: string; backend: string; state: string; workers: number }[]>(
        api,
        'GET',
        '/pools',
      );
      if (opts.json) return printJson(rows);
      return printTable(
        ['pool', 'backend', 'state', 'workers'],
        rows.map((r) => [r.name, r.backend, r.state, r.workers]),
      );
    }
    const p = await call<PoolStatus>(
      api,
      'GET',
      `/pools/${encodeURIComponent(name)}${opts.all ? '?all=1' : ''}`,
    );
    if (opts.json) return printJson(p);
    printPoolStatus(p, opts.all === true);
  });
  serverOptions(
    pool
      .command('scale')
      .description('change the number of workers (fewer: idle ones finish and leave)')
      .argument('<name>', 'the pool')
      .requiredOption('--workers <n>', 'how many workers', intOption('--workers', COUNTS.workersOrNone))
      .option('--json', 'print the pool as JSON'),
  ).action(async (name: string, opts: ServerFlags & { workers: number; json?: boolean }) => {
    const api = connect(droverPaths(), opts);
    const p = await call<PoolStatus>(api, 'POST', `/pools/${encodeURIComponent(name)}/scale`, {
      workers: opts.workers,
    });
    if (opts.json) printJson(p);
    else note(`pool ${name}: scaling to ${opts.workers} worker(s)`);
  });
  serverOptions(
    pool
      .command('resume')
      .description('let a pool paused by failed allocations (--auto) submit workers again')
      .argument('<name>', 'the pool')
      .option('--json', 'print the pool as JSON'),
  ).action(async (name: string, opts: ServerFlags & { json?: boolean }) => {
    const api = connect(droverPaths(), opts);
    const p = await call<PoolStatus>(api, 'POST', `/pools/${encodeURIComponent(name)}/resume`, {});
    if (opts.json) printJson(p);
    else note(`pool ${name}: allocation resumed (${p.auto?.decision ?? 'looking again'})`);
  });
  serverOptions(
    pool
      .command('down')
      .description('stop a pool’s workers; refused while its tasks run unless --force, which cancels them')
      .argument('<name>', 'the pool')
      .option('--force', 'cancel the pool’s queued and running tasks')
      .option('--json', 'print the pool as JSON'),
  ).action(async (name: string, opts: ServerFlags & { force?: boolean; json?: boolean }) => {
    const api = connect(droverPaths(), opts);
    const p = await call<PoolStatus>(
      api,
      'DELETE',
      `/pools/${encodeURIComponent(name)}${opts.force ? '?force=1' : ''}`,
    );
    if (opts.json) printJson(p);
    else note(`pool ${name}: down; its workers are stopping`);
  });
  for (const c of [pool, ...pool.commands]) c.exitOverride().configureOutput({ outputError: () => {} });
}
