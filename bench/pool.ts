/**
 * Pool mode of the benchmark: a real `drover server` with a local pool in a temp folder.
 * 1. Submission latency (request → launch id, as `drover launch --pool --json` measures it around its one HTTP
 *    request) for --num-jobs N = 10, 1,000, 100,000: the 100,000 case at most 1.5× the 10 case.
 * 2. Dispatch: 10,000 × /bin/true on 2 local workers of 1 slot each (launch to completion, --follow) vs the local
 *    backend with 2 slots on the same tasks: at most 1.3×.
 * 3. The server's peak memory (VmHWM) with 100,000 queued tasks: under 300 MB.
 * 4. `drover list --jobname J --json` of a 100,000-task pool launch vs a 10-task one: at most 3×.
 * 5. The server's peak memory while 16 workers each send a maximal report at once: under 200 MB
 *    (pool-memory.ts).
 * 6. Scale: 1,000,000 tasks (DROVER_BENCH_SCALE_TASKS) through 64 simulated workers over HTTP: at least 10,000
 *    tasks/s, the server's peak memory at most 500 MB (pool-scale.ts).
 * The workers of 1, 3 and 4 run a setup that never ends, so nothing runs while the queue is measured.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { benchReportMemory } from './pool-memory.js';
import { benchScale, SCALE_WORKERS, scaleTasks } from './pool-scale.js';
import { compare, notRun, type Result, side } from './result.js';
import {
  alive,
  BenchError,
  DROVER_BIN,
  drover,
  droverEnv,
  fmtMs,
  median,
  NODE,
  progress,
  range,
  removeDir,
  rotated,
  sleepMs,
  tempDir,
} from './util.js';

/** The pool benchmarks. */
export interface PoolOptions {
  repeat: number;
  /** Run only these steps (submit, dispatch, memory, reports, scale); all when absent. */
  only?: readonly string[];
}

/** A drover server running in the background for one benchmark. */
interface BenchServer {
  dir: string;
  pid: number;
  stop(): void;
}

function startServer(dir: string): BenchServer {
  const log = fs.openSync(path.join(dir, 'server.out'), 'a');
  // DROVER_BENCH_SERVER_PROF=DIR: the server writes a CPU profile (node --cpu-prof) into DIR when it stops.
  const prof = process.env.DROVER_BENCH_SERVER_PROF;
  const nodeArgs = prof ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(prof)] : [];
  const args = [...nodeArgs, DROVER_BIN, 'server', '--port', '0', '--heartbeat', '1', '--lost-after', '30'];
  const child = spawn(NODE, args, {
    cwd: dir,
    env: droverEnv(),
    stdio: ['ignore', log, log],
    detached: true,
  });
  fs.closeSync(log);
  child.unref();
  const pid = child.pid!;
  const info = path.join(dir, '.drover', 'server', 'server.json');
  const deadline = Date.now() + 30_000;
  while (!fs.existsSync(info)) {
    if (!alive(pid) || Date.now() > deadline) {
      throw new BenchError(
        `drover server did not start: ${fs.readFileSync(path.join(dir, 'server.out'), 'utf8')}`,
      );
    }
    sleepMs(50);
  }
  return {
    dir,
    pid,
    stop() {
      try {
        drover(['pool', 'down', 'p', '--force'], dir);
      } catch {
        // no pool
      }
      const workers = workerPids(dir);
      const until = Date.now() + 15_000;
      while (workers.some(alive) && Date.now() < until) sleepMs(100);
      for (const w of workers.filter(alive)) process.kill(w, 'SIGKILL');
      if (alive(pid)) process.kill(pid, 'SIGTERM');
      const end = Date.now() + 15_000;
      while (alive(pid) && Date.now() < end) sleepMs(50);
      if (alive(pid)) process.kill(pid, 'SIGKILL');
    },
  };
}

function workerPids(dir: string): number[] {
  const db = new Database(path.join(dir, '.drover', 'ledger.db'), { readonly: true });
  try {
    return (db.prepare('SELECT pid FROM pool_workers').all() as { pid: number }[]).map((r) => r.pid);
  } finally {
    db.close();
  }
}

/** Wait until every pool launch's task rows are made (the server makes them after it answered). */
function waitExpanded(dir: string): void {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const db = new Database(path.join(dir, '.drover', 'ledger.db'), { readonly: true });
    let left: number;
    try {
      left = (
        db
          .prepare(
            'SELECT count(*) AS n FROM pool_launches WHERE expanded < CAST(substr(tasklist, 3) AS INTEGER)',
          )
          .get() as { n: number }
      ).n;
    } finally {
      db.close();
    }
    if (left === 0) return;
    if (Date.now() > deadline) throw new BenchError('the server did not make the task rows within 2 minutes');
    sleepMs(50);
  }
}

function waitReady(dir: string, state: string, n: number): void {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const p = JSON.parse(drover(['pool', 'status', 'p', '--json'], dir).stdout) as {
      workers: { state: string }[];
    };
    if (p.workers.filter((w) => w.state === state).length >= n) return;
    if (Date.now() > deadline) throw new BenchError(`pool workers did not reach ${state}`);
    sleepMs(100);
  }
}

/** A pool whose single worker never finishes its setup: launches queue and nothing runs. */
function idlePool(dir: string): void {
  drover(['pool', 'create', 'p', '--workers', '1', '--cpus', '1', '--setup', 'sleep 3600'], dir);
  waitReady(dir, 'setup', 1);
}

function submitMs(dir: string, n: number, job: string): number {
  const r = drover(
    ['launch', '--pool', 'p', '--num-jobs', String(n), '--command', '/bin/true', '--jobname', job, '--json'],
    dir,
  );
  const out = JSON.parse(r.stdout) as { submit_ms: number; tasks: number };
  if (out.tasks !== n) throw new BenchError(`launch of ${n} answered ${out.tasks} tasks`);
  return out.submit_ms;
}

function benchSubmit(repeat: number): Result[] {
  const dir = tempDir('pool-submit');
  const server = startServer(dir);
  try {
    idlePool(dir);
    const sizes = [10, 1000, 100_000];
    const samples: Record<number, number[]> = { 10: [], 1000: [], 100000: [] };
    let k = 0;
    for (let i = 0; i < repeat; i++) {
      for (const n of rotated(sizes, i)) {
        const ms = submitMs(dir, n, `s${k++}`);
        samples[n]!.push(ms);
        waitExpanded(dir);
        progress(`pool submit ${i + 1}/${repeat} N=${n}: ${fmtMs(ms)}`);
      }
    }
    const checks = ['each launch answered with its launch id and the number of tasks asked for'];
    const notes = [
      'timed: the one HTTP request of drover launch --pool --num-jobs N --json (its submit_ms), the server on loopback',
      `medians: N=10 ${fmtMs(median(samples[10]!))}, N=1,000 ${fmtMs(median(samples[1000]!))}, N=100,000 ${fmtMs(median(samples[100000]!))}`,
      'the task rows are made after the answer, in chunks; each sample waits for them before the next',
    ];
    return [
      compare(
        'pool.submit-100k',
        'pool submission latency, N=100,000 vs N=10',
        side('N=100,000', samples[100000]!),
        side('N=10', samples[10]!),
        1.5,
        checks,
        notes,
      ),
      compare(
        'pool.submit-1k',
        'pool submission latency, N=1,000 vs N=10',
        side('N=1,000', samples[1000]!),
        side('N=10', samples[10]!),
        undefined,
        checks,
        [],
      ),
    ];
  } finally {
    server.stop();
    removeDir(dir);
  }
}

function benchDispatch(repeat: number): Result[] {
  const n = 10_000;
  const values = range(n);
  const dir = tempDir('pool-dispatch');
  const server = startServer(dir);
  const samples: Record<string, number[]> = { pool: [], local: [] };
  try {
    drover(['pool', 'create', 'p', '--workers', '2', '--cpus', '1', '--slots', '1'], dir);
    waitReady(dir, 'ready', 2);
    let k = 0;
    for (let i = 0; i < repeat; i++) {
      for (const s of rotated(['pool', 'local'], i)) {
        const job = `d${k++}`;
        drover(['prelaunch', '+command', '/bin/true', '+jobname', job, '+pos-arg', ...values, '+q'], dir);
        const args =
          s === 'pool'
            ? ['launch', '--pool', 'p', '--jobname', job, '--follow', '-q']
            : ['launch', '--jobname', job, '--backend', 'local', '--max-tasks', '2', '-q'];
        const ms = drover(args, dir).ms;
        const st = JSON.parse(drover(['status', job, '--json'], dir).stdout) as {
          counts: { succeeded: number };
        };
        if (st.counts.succeeded !== n)
          throw new BenchError(`${s} run of ${job}: ${st.counts.succeeded}/${n} succeeded`);
        samples[s]!.push(ms);
        progress(`pool dispatch ${i + 1}/${repeat} ${s}: ${fmtMs(ms)}`);
        // Logs stay until the end: deleting thousands of files slows creating files for ~10 s here (runSides).
      }
    }
  } finally {
    server.stop();
    removeDir(dir);
  }
  return [
    compare(
      'pool.dispatch-10k',
      `${n} × /bin/true on 2 local workers of 1 slot vs the local backend with 2 slots`,
      side('drover launch --pool p --follow', samples.pool!),
      side('drover launch --backend local --max-tasks 2', samples.local!),
      1.3,
      [`after every run, drover status reported ${n} succeeded`],
      [
        'timed: the whole drover launch (the pool side: request, dispatch, every attempt recorded, --follow to the end)',
      ],
    ),
  ];
}

function benchMemoryAndList(repeat: number): Result[] {
  const dir = tempDir('pool-memory');
  const server = startServer(dir);
  try {
    idlePool(dir);
    submitMs(dir, 100_000, 'big');
    submitMs(dir, 10, 'small');
    waitExpanded(dir);
    // Let the dispatcher buffer what it buffers, then read the high-water mark of the server's memory.
    sleepMs(1000);
    const status = fs.readFileSync(`/proc/${server.pid}/status`, 'utf8');
    const hwmKb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
    const mb = hwmKb / 1024;
    // Judged as a ratio to the 300 MB budget.
    const memory = compare(
      'pool.server-memory-100k',
      'server peak memory (VmHWM) with 100,000 queued tasks vs the 300 MB budget',
      side('VmHWM', [mb], undefined, 'MB'),
      side('budget', [300], undefined, 'MB'),
      1.0,
      ['100,000 tasks queued (drover status: queued 100000)'],
      [`${mb.toFixed(1)} MB at its peak (read from /proc/PID/status after the queue was made)`],
    );
    const st = JSON.parse(drover(['status', 'big', '--json'], dir).stdout) as { counts: { queued: number } };
    if (st.counts.queued !== 100_000) throw new BenchError(`big: ${st.counts.queued} queued, not 100000`);
    const samples: Record<string, number[]> = { big: [], small: [] };
    for (let i = 0; i < repeat; i++) {
      for (const job of rotated(['big', 'small'], i)) {
        const r = drover(['list', '--jobname', job, '--json'], dir);
        const rows = JSON.parse(r.stdout) as unknown[];
        if (rows.length !== (job === 'big' ? 100_000 : 10))
          throw new BenchError(`list ${job}: ${rows.length} rows`);
        samples[job]!.push(r.ms);
      }
      progress(`pool list ${i + 1}/${repeat}`);
    }
    return [
      memory,
      compare(
        'pool.list-100k',
        'drover list --jobname J --json: 100,000-task pool launch vs 10-task',
        side('100,000 tasks', samples.big!),
        side('10 tasks', samples.small!),
        3.0,
        ['each list printed one JSON object per task'],
      ),
    ];
  } finally {
    server.stop();
    removeDir(dir);
  }
}

/** Benchmark 5 (pool-memory.ts) in a server of its own. */
export function benchReports(): Result[] {
  const dir = tempDir('pool-reports');
  const server = startServer(dir);
  try {
    idlePool(dir);
    return [
      benchReportMemory({
        dir,
        serverPid: server.pid,
        launch: (n, job) => {
          submitMs(dir, n, job);
          waitExpanded(dir);
        },
      }),
    ];
  } finally {
    server.stop();
    removeDir(dir);
  }
}

/** Benchmark 6 (pool-scale.ts) in a server of its own. */
export function benchScaleOut(): Result[] {
  const dir = tempDir('pool-scale');
  const server = startServer(dir);
  try {
    idlePool(dir);
    return benchScale({ dir, serverPid: server.pid });
  } finally {
    server.stop();
    removeDir(dir);
  }
}

/** Run the pool benchmarks; `report` is called with each result as soon as it is known. */
export function runPool(opts: PoolOptions, report: (r: Result) => void): Result[] {
  const all: Result[] = [];
  const steps: [string, string, () => Result[]][] = [
    ['submit', 'pool submission latency', () => benchSubmit(opts.repeat)],
    [
      'dispatch',
      'pool dispatch of 10,000 tasks',
      () => benchDispatch(Math.max(1, Math.ceil(opts.repeat / 2))),
    ],
    ['memory', 'pool server memory and list', () => benchMemoryAndList(opts.repeat)],
    ['reports', 'pool server memory under a storm of maximal reports', () => benchReports()],
    [
      'scale',
      `pool scale: ${scaleTasks()} tasks through ${SCALE_WORKERS} simulated workers`,
      () => benchScaleOut(),
    ],
  ];
  for (const [id, title, fn] of steps) {
    if (opts.only && !opts.only.includes(id)) continue;
    let results: Result[];
    try {
      results = fn();
    } catch (err) {
      if (!(err instanceof BenchError)) throw err;
      results = [notRun(`pool.${id}`, title, 'FAILED', err.message)];
    }
    for (const r of results) {
      report(r);
      all.push(r);
    }
  }
  return all;
}
