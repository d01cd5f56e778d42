import fs from 'node:fs';
import path from 'node:path';
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

/**
 * 6. `drover list J --json` (100,000 finished tasks with start, end, host) vs `drover --version`. Timed with its
 * output going to a file (`drover list J --json > tasks.json`), so that what is measured is drover's work, not
 * this harness reading 25 MB through a pipe and decoding them into a string (~50-100 ms of its own, which
 * `--version`'s few bytes never pay); the same runs through that pipe are shown beside it, without a target.
 */
export function benchListJson(repeat: number): Result[] {
  const n = Math.max(6, repeat * 2);
  progress('list-json: building the 100,000-task job...');
  const big = buildBigJob(false);
  try {
    const env = droverEnv();
    const out = path.join(big.dir, 'tasks.json');
    const sides = ['json', 'pipe', 'version'] as const;
    const samples: Record<(typeof sides)[number], number[]> = { json: [], pipe: [], version: [] };
    const cpu: Record<(typeof sides)[number], number[]> = { json: [], pipe: [], version: [] };
    for (let i = 0; i < n; i++) {
      for (const s of rotated(sides, i)) {
        let r: Run;
        if (s === 'version') {
          r = runOk('drover --version', NODE, [DROVER_BIN, '--version'], { cwd: big.dir, env });
        } else if (s === 'json') {
          r = drover(['list', big.jobname, '--json'], big.dir, undefined, { stdoutFile: out });
          if (i === 0) checkJson(fs.readFileSync(out, 'utf8'), big.tasks);
        } else {
          r = drover(['list', big.jobname, '--json'], big.dir);
          if (i === 0) checkJson(r.stdout, big.tasks);
        }
        samples[s].push(r.ms);
        cpu[s].push(r.cpuMs);
      }
    }
    const json = side('drover list J --json > FILE', samples.json, cpu.json);
    progress(`list-json: ${n} runs each; median ${fmtMs(json.median)}`);
    const version = side('drover --version', samples.version, cpu.version);
    const notes = [`ledger built with ${big.how}`];
    return [
      compare(
        'local.list-100k.json',
        'drover list J --json > FILE (100,000 finished tasks with timings and hosts) vs drover --version',
        json,
        version,
        LIST_JSON_TARGET,
        [
          `the first run's file held an array of ${big.tasks} tasks, each succeeded with numbers for started_at, ended_at, duration_s and a host`,
        ],
        notes,
      ),
      compare(
        'local.list-100k.json.pipe',
        'the same, its output read by this harness through a pipe, vs drover --version',
        side('drover list J --json | harness', samples.pipe, cpu.pipe),
        version,
        undefined,
        [`the first run's output was the same array`],
        notes,
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
