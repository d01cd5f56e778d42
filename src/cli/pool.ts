import type { Command } from 'commander';
import { call, connect, type ServerFlags } from '../backends/pool/client.js';
import { usageError } from '../errors.js';
import { droverPaths } from '../paths.js';
import type { CreatePoolRequest, PoolStatus } from '../protocol/messages.js';
import { COUNTS, SECONDS } from '../util/limits.js';
import { formatSize } from '../util/size.js';
import { note, printJson, printTable } from './output.js';
import { durationOption, intOption, sizeOption } from './parse.js';

interface CreateFlags extends ServerFlags {
  workers: number;
  backend: string;
  cpus: number;
  gpus: number;
  /** MiB. */
  mem?: number;
  /** Seconds. */
  duration?: number;
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
  serverOptions(
    pool
      .command('create')
      .description('create a pool and start its workers (local processes, or one Slurm / Grid Engine array)')
      .argument('<name>', 'the pool')
      .requiredOption('--workers <n>', 'how many workers', intOption('--workers', COUNTS.workers))
      .option('--backend <name>', 'where the workers run: local, slurm, gridengine', 'local')
      .option('--cpus <n>', 'CPUs per worker', intOption('--cpus', COUNTS.cpus), 1)
      .option('--gpus <n>', 'GPUs per worker', intOption('--gpus', COUNTS.gpus), 0)
      .option('--mem <size>', 'memory per worker, e.g. 16G', sizeOption('--mem'))
      .option(
        '--duration <time>',
        'how long each worker may live (scheduler time limit), e.g. 4:00:00',
        durationOption('--duration', SECONDS.limit),
      )
      .option('--slots <n>', 'tasks at once per worker (default: --cpus)', intOption('--slots', COUNTS.slots))
      .option('--setup <cmd>', 'run once by each worker before it takes tasks')
      .option('--partition <name>', 'Slurm partition')
      .option('--account <name>', 'Slurm account')
      .option('--qos <name>', 'Slurm QOS')
      .option('--queue <name>', 'Grid Engine queue')
      .option('--json', 'print the pool as JSON'),
  ).action(async (name: string, opts: CreateFlags) => {
    if (!['local', 'slurm', 'gridengine'].includes(opts.backend)) {
      throw usageError(`--backend '${opts.backend}' is not a pool backend: use local, slurm or gridengine`);
    }
    const options: Record<string, string> = {};
    for (const k of ['partition', 'account', 'qos', 'queue'] as const) if (opts[k]) options[k] = opts[k]!;
    const req: CreatePoolRequest = {
      name,
      backend: opts.backend as CreatePoolRequest['backend'],
      workers: opts.workers,
      cpus: opts.cpus,
      gpus: opts.gpus,
      ...(opts.mem !== undefined ? { mem: formatSize(opts.mem) } : {}),
      ...(opts.duration !== undefined ? { duration: opts.duration } : {}),
      ...(opts.slots !== undefined ? { slots: opts.slots } : {}),
      ...(opts.setup !== undefined ? { setup: opts.setup } : {}),
      options,
    };
    const api = connect(droverPaths(), opts);
    const p = await call<PoolStatus>(api, 'POST', '/pools', req);
    if (opts.json) printJson(p);
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

/** `drover pool status NAME` for people: a summary line, the workers, and why the gone ones left. */
function printPoolStatus(p: PoolStatus, all: boolean): void {
  const ready = p.workers.filter((w) => w.state === 'ready').length;
  process.stdout.write(
    `pool ${p.name} (${p.backend}, ${p.state}): ${ready}/${p.workers_wanted} workers ready, ${p.running} task(s) running, ${p.queued} queued\n`,
  );
  printTable(
    ['worker', 'host', 'pid', 'state', 'free', 'tasks', 'seen', ...(all ? ['reason'] : [])],
    p.workers.map((w) => [
      w.id,
      w.host,
      w.pid,
      w.state,
      `${w.free_slots}/${w.slots}`,
      w.tasks.length > 4 ? `${w.tasks.slice(0, 4).join(' ')} ...` : w.tasks.join(' ') || '-',
      `${w.seen_ago}s ago`,
      ...(all ? [w.reason ?? '-'] : []),
    ]),
  );
  if (p.workers_gone > 0 && !all) {
    const why = p.gone_reasons.length > 0 ? `; latest: ${p.gone_reasons.join('; ')}` : '';
    process.stdout.write(
      `${p.workers_gone} worker(s) lost or left (drover pool status ${p.name} --all)${why}\n`,
    );
  }
}
