/**
 * drover's benchmark harness: `node dist/bench/run.js [local|slurm|gridengine|pool|all] [--repeat N] ...`
 * (`npm run bench` builds first). Every benchmark times drover and its reference side by side, interleaved,
 * in fresh temp folders, and checks drover's result; it prints medians and ratios against the targets, a final
 * table, and writes the results as JSON. Targets are for people to read: a miss prints MISSED and still exits
 * 0; a run or check that fails prints FAILED and exits 1. See docs/benchmarks.md.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runGridEngine } from './gridengine.js';
import { LOCAL_BENCHMARKS, type LocalBenchmark, runLocal } from './local/index.js';
import { runPool } from './pool.js';
import { markdownTable, type Result, resultLine, resultTable } from './result.js';
import { runSlurm } from './slurm.js';
import { cleanupTemp, fileCreateMs, REPO_ROOT, SLOW_FILE_CREATE_MS, staleBuildWarning } from './util.js';

const MODES = ['local', 'slurm', 'gridengine', 'pool', 'all'] as const;
type Mode = (typeof MODES)[number];
const NOT_YET: readonly Mode[] = [];

const USAGE = `usage: node dist/bench/run.js [local|slurm|gridengine|pool|all] [--repeat N] [--only NAMES] [--out FILE] [--real-status-launch] [--markdown]

  local                  benchmarks on this machine (the default)
  gridengine             500 short tasks on the real Grid Engine, 3 ways (--repeat default 1 here: ~2-4 min each)
  slurm                  1000 short tasks on the real Slurm, 3 ways (--repeat default 1 here: ~1-2 min each)
  pool                   a drover server with a local pool: submission latency, dispatch, memory, list, scale
  all                    every mode
  --repeat N             repetitions of launch and prelaunch (default 5); version and status run 6×N
                         (DROVER_BENCH_LAUNCH_TASKS=N, or DROVER_BENCH_LAUNCH_100K=1: spawn-limit also takes an N-task
                         job through prelaunch, launch, status, list --json and logs, with peak memory; minutes)
  --only NAMES           comma-separated subset of: ${LOCAL_BENCHMARKS.join(', ')}
  --out FILE             where to write the JSON results (default: <tmp>/drover-bench/latest.json)
  --real-status-launch   fill the 100,000-task ledger with a real launch (minutes) instead of runner records
  --markdown             also print the results as a Markdown table (for docs/benchmarks.md)
`;

interface Args {
  mode: Mode;
  repeat: number;
  /** Whether --repeat was given (Grid Engine mode repeats once unless it was). */
  repeatGiven: boolean;
  only: Set<LocalBenchmark>;
  out: string;
  realStatusLaunch: boolean;
  markdown: boolean;
}

class UsageError extends Error {}

function parseArgs(argv: readonly string[]): Args | 'help' {
  let mode: Mode | undefined;
  let repeat = 5;
  let repeatGiven = false;
  let only = new Set<LocalBenchmark>(LOCAL_BENCHMARKS);
  let out = path.join(os.tmpdir(), 'drover-bench', 'latest.json');
  let realStatusLaunch = false;
  let markdown = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new UsageError(`${a} needs a value`);
      return v;
    };
    if (a === '--help' || a === '-h') return 'help';
    if (a === '--repeat') {
      const v = value();
      repeat = Number(v);
      repeatGiven = true;
      if (!/^[0-9]+$/.test(v) || repeat < 1)
        throw new UsageError(`--repeat '${v}' is not a whole number ≥ 1`);
    } else if (a === '--only') {
      const names = value().split(',').filter(Boolean);
      for (const n of names) {
        if (!(LOCAL_BENCHMARKS as readonly string[]).includes(n))
          throw new UsageError(`--only '${n}' is not a benchmark: use ${LOCAL_BENCHMARKS.join(', ')}`);
      }
      only = new Set(names as LocalBenchmark[]);
    } else if (a === '--out') {
      out = path.resolve(value());
    } else if (a === '--real-status-launch') {
      realStatusLaunch = true;
    } else if (a === '--markdown') {
      markdown = true;
    } else if (a.startsWith('-')) {
      throw new UsageError(`unknown option '${a}' (see --help)`);
    } else if (mode === undefined) {
      if (!(MODES as readonly string[]).includes(a))
        throw new UsageError(`unknown mode '${a}': use one of ${MODES.join(', ')}`);
      mode = a as Mode;
    } else {
      throw new UsageError(`one mode only: got '${mode}' and '${a}'`);
    }
  }
  return { mode: mode ?? 'local', repeat, repeatGiven, only, out, realStatusLaunch, markdown };
}

/** The commit benchmarked, `+dirty` when the work tree has changes; undefined outside git. */
function commit(): string | undefined {
  try {
    const sha = execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
    }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no', '--', 'src', 'bin'], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
    }).trim();
    return dirty ? `${sha}+dirty` : sha;
  } catch {
    return undefined;
  }
}

function main(): number {
  let args: Args | 'help';
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`bench: ${err.message}\n`);
    return 2;
  }
  if (args === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as {
    version: string;
  };
  const machine = {
    cores: os.availableParallelism(),
    cpu: os.cpus()[0]?.model ?? 'unknown',
    memory_gib: Math.round(os.totalmem() / 2 ** 30),
    platform: `${os.platform()} ${os.release()}`,
    node: process.version,
    loadavg_at_start: os.loadavg().map((x) => Number(x.toFixed(2))),
    file_create_1000_ms_at_start: Number(fileCreateMs().toFixed(1)),
  };
  const started = new Date();
  process.stdout.write(
    `drover ${pkg.version} (${commit() ?? 'no git'}) · node ${machine.node} · ${machine.cores} cores · load ${machine.loadavg_at_start.join(' ')} · 1000 file creates ${machine.file_create_1000_ms_at_start} ms · ${started.toISOString()}\n`,
  );
  process.stdout.write(
    `repeat ${args.repeat} (version and status: ${args.repeat * 6}); medians; ratio = drover / reference (paired: median of per-repetition ratios)\n\n`,
  );

  const stale = staleBuildWarning();
  if (stale) process.stdout.write(`WARNING: ${stale}\n\n`);

  const modes: Mode[] = args.mode === 'all' ? ['local', 'slurm', 'gridengine', 'pool'] : [args.mode];
  const results: Result[] = [];
  const skippedModes: string[] = [];
  for (const mode of modes) {
    if (NOT_YET.includes(mode)) {
      process.stdout.write(`${mode}: not implemented yet (skipped)\n`);
      skippedModes.push(mode);
      continue;
    }
    process.stdout.write(`== ${mode}\n`);
    const report = (r: Result) => {
      process.stdout.write(`${resultLine(r)}\n`);
      for (const c of r.checks) process.stdout.write(`    checked: ${c}\n`);
      for (const n of r.notes) process.stdout.write(`    note: ${n}\n`);
    };
    if (mode === 'pool') {
      // DROVER_BENCH_POOL_STEPS=scale,memory: only those steps of the pool mode.
      const steps = process.env.DROVER_BENCH_POOL_STEPS?.split(',').filter(Boolean);
      const pool = runPool(
        { repeat: args.repeatGiven ? args.repeat : 3, ...(steps ? { only: steps } : {}) },
        report,
      );
      results.push(...pool);
      continue;
    }
    if (mode === 'slurm') {
      const slurm = runSlurm(args.repeatGiven ? args.repeat : 1);
      slurm.forEach(report);
      results.push(...slurm);
      continue;
    }
    if (mode === 'gridengine') {
      const ge = runGridEngine(args.repeatGiven ? args.repeat : 1);
      ge.forEach(report);
      results.push(...ge);
      continue;
    }
    results.push(
      ...runLocal({ repeat: args.repeat, only: args.only, realStatusLaunch: args.realStatusLaunch }, report),
    );
  }
  if (results.length > 0) process.stdout.write(`\n${resultTable(results)}\n`);
  if (args.markdown && results.length > 0) process.stdout.write(`\n${markdownTable(results)}\n`);

  const missed = results.filter((r) => r.verdict === 'MISSED');
  const failed = results.filter((r) => r.verdict === 'FAILED');
  if (missed.length > 0)
    process.stdout.write(`\nMISSED ${missed.length} target(s): ${missed.map((r) => r.id).join(', ')}\n`);
  if (failed.length > 0)
    process.stdout.write(`FAILED ${failed.length} benchmark(s): ${failed.map((r) => r.id).join(', ')}\n`);

  const loadEnd = os.loadavg().map((x) => Number(x.toFixed(2)));
  const busiest = Math.max(machine.loadavg_at_start[0]!, loadEnd[0]!);
  const loadWarning =
    busiest > machine.cores
      ? `load average reached ${busiest} on ${machine.cores} cores: other work ran meanwhile, the figures are noisy (ratios are measured side by side, but re-run on a quiet machine)`
      : undefined;
  if (loadWarning) process.stdout.write(`\nWARNING: ${loadWarning}\n`);
  const createEnd = Number(fileCreateMs().toFixed(1));
  const slowest = Math.max(machine.file_create_1000_ms_at_start, createEnd);
  const diskWarning =
    slowest > SLOW_FILE_CREATE_MS
      ? `creating files was slow on this disk (1000 empty files: ${machine.file_create_1000_ms_at_start} ms at the start, ${createEnd} ms at the end; under ${SLOW_FILE_CREATE_MS} ms when quiet): the sides that write a log file per task (drover, xargs-logs) are slowed most; re-run later (docs/benchmarks.md)`
      : undefined;
  if (diskWarning) process.stdout.write(`\nWARNING: ${diskWarning}\n`);

  fs.mkdirSync(path.dirname(args.out), { recursive: true });
  const doc = {
    drover: pkg.version,
    commit: commit() ?? null,
    started_at: started.toISOString(),
    finished_at: new Date().toISOString(),
    machine: { ...machine, loadavg_at_end: loadEnd, file_create_1000_ms_at_end: createEnd },
    mode: args.mode,
    repeat: args.repeat,
    skipped_modes: skippedModes,
    warnings: [stale, loadWarning, diskWarning].filter((w) => w !== undefined),
    results,
  };
  fs.writeFileSync(args.out, `${JSON.stringify(doc, null, 2)}\n`);
  process.stdout.write(`\nresults written to ${args.out}\n`);
  return failed.length > 0 ? 1 : 0;
}

process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code !== 'EPIPE') throw err;
  cleanupTemp();
  process.exit(0); // the reader went away (e.g. | head)
});
process.on('SIGINT', () => {
  cleanupTemp();
  process.exit(130);
});
try {
  process.exitCode = main();
} finally {
  cleanupTemp();
}
