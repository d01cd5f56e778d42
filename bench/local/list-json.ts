import { compare, type Result, side } from '../result.js';
import {
  BenchError,
  DROVER_BIN,
  drover,
  droverEnv,
  fmtMs,
  NODE,
  progress,
  type Run,
  removeDir,
  rotated,
  runOk,
} from '../util.js';
import { buildBigJob } from './big-job.js';

/** Issue 12's target: `list --json` of 100,000 tasks with their timings and hosts within 3× `drover --version`. */
const LIST_JSON_TARGET = 3.0;

/** 6. `drover list J --json` (100,000 finished tasks with start, end, host) vs `drover --version`. */
export function benchListJson(repeat: number): Result[] {
  const n = Math.max(6, repeat * 2);
  progress('list-json: building the 100,000-task job...');
  const big = buildBigJob(false);
  try {
    const env = droverEnv();
    const samples: Record<'json' | 'version', number[]> = { json: [], version: [] };
    const cpu: Record<'json' | 'version', number[]> = { json: [], version: [] };
    for (let i = 0; i < n; i++) {
      for (const s of rotated(['json', 'version'] as const, i)) {
        let r: Run;
        if (s === 'version') {
          r = runOk('drover --version', NODE, [DROVER_BIN, '--version'], { cwd: big.dir, env });
        } else {
          r = drover(['list', big.jobname, '--json'], big.dir);
          if (i === 0) checkJson(r.stdout, big.tasks);
        }
        samples[s].push(r.ms);
        cpu[s].push(r.cpuMs);
      }
    }
    const json = side('drover list J --json', samples.json, cpu.json);
    progress(`list-json: ${n} runs each; median ${fmtMs(json.median)}`);
    return [
      compare(
        'local.list-100k.json',
        'drover list J --json (100,000 finished tasks with timings and hosts) vs drover --version',
        json,
        side('drover --version', samples.version, cpu.version),
        LIST_JSON_TARGET,
        [
          `the first run's array had ${big.tasks} tasks, each succeeded with numbers for started_at, ended_at, duration_s and a host`,
        ],
        [`ledger built with ${big.how}`],
      ),
    ];
  } finally {
    removeDir(big.dir);
  }
}

/** The array has every task, in order, each with its latest attempt's timings and host. */
function checkJson(stdout: string, tasks: number): void {
  let rows: {
    task?: number;
    state?: string;
    started_at?: unknown;
    ended_at?: unknown;
    duration_s?: unknown;
    host?: unknown;
  }[];
  try {
    rows = JSON.parse(stdout) as typeof rows;
  } catch {
    throw new BenchError('drover list J --json printed no JSON array');
  }
  if (rows.length !== tasks)
    throw new BenchError(`drover list --json printed ${rows.length} tasks, not ${tasks}`);
  rows.forEach((r, i) => {
    const ok =
      r.task === i + 1 &&
      r.state === 'succeeded' &&
      typeof r.started_at === 'number' &&
      typeof r.ended_at === 'number' &&
      typeof r.duration_s === 'number' &&
      typeof r.host === 'string';
    if (!ok) throw new BenchError(`drover list --json: task ${i + 1} is ${JSON.stringify(r)}`);
  });
}
