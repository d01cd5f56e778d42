/**
 * Pool benchmark 6: the controller scaling out. A real `drover server` on loopback, a pool whose own worker never
 * finishes its setup, and 64 simulated workers (bench/pool-scale-load.ts, real HTTP clients in one process) that
 * register, long-poll and report every task they are handed as succeeded at once. N tasks (1,000,000 by default,
 * DROVER_BENCH_SCALE_TASKS) are launched with `drover launch --pool p --num-jobs N`; timed from the launch
 * request to the last report accepted. Targets: at least 10,000 tasks/s, the server's peak memory (VmHWM) at
 * most 500 MB. `drover status --json` must count every task succeeded.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { compare, type Result, side } from './result.js';
import { alive, BenchError, drover, NODE, progress, REPO_ROOT, sleepMs } from './util.js';

/** The parts of the pool benchmark this one shares (a server in a temp folder with an idle pool `p`). */
export interface ScaleBenchDeps {
  dir: string;
  serverPid: number;
}

export const SCALE_WORKERS = 64;
/** Slots each simulated worker says it has: how many tasks the controller hands it at a time. */
const SLOTS = 256;
const TARGET_TASKS_PER_S = 10_000;
const BUDGET_MB = 500;

export function scaleTasks(): number {
  const v = process.env.DROVER_BENCH_SCALE_TASKS;
  if (v === undefined || v === '') return 1_000_000;
  if (!/^[0-9]+$/.test(v) || Number(v) < 1)
    throw new BenchError(`DROVER_BENCH_SCALE_TASKS '${v}' is not ≥ 1`);
  return Number(v);
}

function vm(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? Number.NaN) / 1024;
}

/** Run N tasks through the 64 simulated workers against the server of `deps`. */
export function benchScale(deps: ScaleBenchDeps): Result[] {
  const n = scaleTasks();
  const info = JSON.parse(
    fs.readFileSync(path.join(deps.dir, '.drover', 'server', 'server.json'), 'utf8'),
  ) as { url: string };
  const tokenFile = path.join(deps.dir, '.drover', 'pools', 'p', 'worker-token');
  const outFile = path.join(deps.dir, 'scale-load.out');
  const errFile = path.join(deps.dir, 'scale-load.err');
  const out = fs.openSync(outFile, 'w');
  const err = fs.openSync(errFile, 'w');
  const load = spawn(
    NODE,
    [
      path.join(REPO_ROOT, 'dist', 'bench', 'pool-scale-load.js'),
      info.url,
      tokenFile,
      'p',
      String(SCALE_WORKERS),
      String(n),
      String(SLOTS),
    ],
    { stdio: ['ignore', out, err], detached: true },
  );
  fs.closeSync(out);
  fs.closeSync(err);
  load.unref();
  const loadPid = load.pid!;
  try {
    // The workers register and wait in their polls before the launch.
    sleepMs(2000);
    if (!alive(loadPid)) throw new BenchError(`the scale load stopped: ${fs.readFileSync(errFile, 'utf8')}`);
    const t0 = Date.now();
    const r = drover(
      [
        'launch',
        '--pool',
        'p',
        '--num-jobs',
        String(n),
        '--command',
        '/bin/true',
        '--jobname',
        'scale',
        '--json',
      ],
      deps.dir,
    );
    const launched = JSON.parse(r.stdout) as { tasks: number };
    if (launched.tasks !== n) throw new BenchError(`launch of ${n} answered ${launched.tasks} tasks`);
    const deadline = Date.now() + Math.max(600_000, n * 2);
    while (alive(loadPid)) {
      if (Date.now() > deadline) throw new BenchError('the scale load did not finish in time');
      sleepMs(100);
    }
    const text = fs.readFileSync(outFile, 'utf8').trim();
    if (!text) throw new BenchError(`the scale load failed: ${fs.readFileSync(errFile, 'utf8').trim()}`);
    const res = JSON.parse(text) as {
      reported: number;
      lastReportAt: number;
      polls: number;
      reports: number;
    };
    const ms = res.lastReportAt - t0;
    const peak = vm(deps.serverPid, 'VmHWM');
    const st = JSON.parse(drover(['status', 'scale', '--json'], deps.dir).stdout) as {
      counts: { succeeded: number };
    };
    if (st.counts.succeeded !== n) throw new BenchError(`scale: ${st.counts.succeeded}/${n} succeeded`);
    const rate = n / (ms / 1000);
    progress(
      `pool scale: ${n} tasks in ${(ms / 1000).toFixed(1)} s = ${Math.round(rate)} tasks/s, peak ${peak.toFixed(1)} MB`,
    );
    const checks = [
      `drover status: ${st.counts.succeeded} succeeded of ${n}`,
      `${res.reports} reports (${res.reported} tasks) accepted, ${res.polls} polls`,
    ];
    return [
      // Judged as time per task against the target's (1/10,000 s): a ratio ≤ 1 meets it.
      compare(
        'pool.scale-throughput',
        `${n} tasks through ${SCALE_WORKERS} simulated workers: ms per 1,000 tasks vs the ${TARGET_TASKS_PER_S} tasks/s target`,
        side('ms per 1,000 tasks', [(ms / n) * 1000]),
        side('target', [(1000 / TARGET_TASKS_PER_S) * 1000]),
        1.0,
        checks,
        [
          `${Math.round(rate)} tasks/s (${(ms / 1000).toFixed(1)} s from the launch request to the last report accepted)`,
          `each worker says it has ${SLOTS} slots and reports what it is handed at once (start and end records)`,
        ],
      ),
      compare(
        'pool.scale-memory',
        `server peak memory (VmHWM) pushing ${n} tasks through ${SCALE_WORKERS} workers vs the ${BUDGET_MB} MB budget`,
        side('VmHWM', [peak], undefined, 'MB'),
        side('budget', [BUDGET_MB], undefined, 'MB'),
        1.0,
        checks,
        [`${peak.toFixed(1)} MB at its peak, over the server's whole life`],
      ),
    ];
  } finally {
    if (alive(loadPid)) process.kill(loadPid, 'SIGKILL');
  }
}
