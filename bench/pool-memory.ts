/**
 * Pool benchmark 5: what reports can make the controller hold. 16 workers each send a maximal report (just under
 * the 1 MiB body limit: the start and end of every task they hold, each end's reason padded) at the same moment,
 * while 16 more each send an 8 MiB one (refused, 413, read and thrown away), for 3 rounds. The server's peak
 * memory (VmHWM, over its whole life) must stay under 200 MB.
 */
import fs from 'node:fs';
import path from 'node:path';
import { compare, type Result, side } from './result.js';
import { BenchError, drover, NODE, progress, REPO_ROOT, run } from './util.js';

/** The parts of the pool benchmark this one shares (a server in a temp folder with an idle pool `p`). */
export interface MemoryBenchDeps {
  dir: string;
  serverPid: number;
  /** Launch N tasks of /bin/true as `job` on pool p. */
  launch(n: number, job: string): void;
}

const WORKERS = 16;
const PER_WORKER = 1000;
const ROUNDS = 3;
const BUDGET_MB = 200;

function vm(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? Number.NaN) / 1024;
}

/** Run the report storm against the server of `deps` and judge its peak memory. */
export function benchReportMemory(deps: MemoryBenchDeps): Result {
  // A round more than the storm uses: the controller hands some workers tasks ahead (prefetch), and with exactly
  // what the rounds report the last round would leave the others short, polling for tasks that are not there.
  deps.launch(WORKERS * PER_WORKER * (ROUNDS + 1), 'storm');
  const before = vm(deps.serverPid, 'VmHWM');
  const info = JSON.parse(
    fs.readFileSync(path.join(deps.dir, '.drover', 'server', 'server.json'), 'utf8'),
  ) as {
    url: string;
  };
  const tokenFile = path.join(deps.dir, '.drover', 'pools', 'p', 'worker-token');
  const r = run(NODE, [
    path.join(REPO_ROOT, 'dist', 'bench', 'pool-load.js'),
    info.url,
    tokenFile,
    'p',
    String(WORKERS),
    String(PER_WORKER),
    String(ROUNDS),
  ]);
  if (r.status !== 0) throw new BenchError(`the report load failed: ${r.stderr.trim()}`);
  const out = JSON.parse(r.stdout) as { statuses: Record<string, number>; bytes: number; records: number };
  const ok = out.statuses['200'] ?? 0;
  const tooLarge = out.statuses['413'] ?? 0;
  if (ok !== WORKERS * ROUNDS || tooLarge !== WORKERS * ROUNDS) {
    throw new BenchError(`the reports were answered ${JSON.stringify(out.statuses)}`);
  }
  const st = JSON.parse(drover(['status', 'storm', '--json'], deps.dir).stdout) as {
    counts: { succeeded: number };
  };
  if (st.counts.succeeded !== out.records / 2) {
    throw new BenchError(`storm: ${st.counts.succeeded} succeeded, ${out.records / 2} reported`);
  }
  const peak = vm(deps.serverPid, 'VmHWM');
  const rss = vm(deps.serverPid, 'VmRSS');
  progress(
    `pool report storm: peak ${peak.toFixed(1)} MB (before ${before.toFixed(1)} MB, now ${rss.toFixed(1)} MB)`,
  );
  return compare(
    'pool.server-memory-reports',
    `server peak memory (VmHWM) while ${WORKERS} workers each send a maximal report at once (and ${WORKERS} an 8 MiB one), ${ROUNDS} rounds, vs the ${BUDGET_MB} MB budget`,
    side('VmHWM', [peak], undefined, 'MB'),
    side('budget', [BUDGET_MB], undefined, 'MB'),
    1.0,
    [
      `${ok} maximal reports applied (${(out.bytes / 2 ** 20).toFixed(1)} MiB, ${out.records} records; drover status: ${st.counts.succeeded} succeeded)`,
      `${tooLarge} oversized reports refused with 413`,
    ],
    [
      `VmHWM ${before.toFixed(1)} MB before the storm, ${peak.toFixed(1)} MB after; VmRSS after: ${rss.toFixed(1)} MB`,
      `the peak is over the server’s whole life: its start, the pool, the launch of ${WORKERS * PER_WORKER * (ROUNDS + 1)} tasks and the storm`,
    ],
  );
}
