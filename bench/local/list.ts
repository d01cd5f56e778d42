import { compare, type Result, side } from '../result.js';
import { BenchError, drover, fmtMs, progress, type Run, removeDir, rotated } from '../util.js';
import { buildBigJob } from './big-job.js';

/** Absolute target of `drover list J` on 100,000 tasks (issue 9: it was quadratic, 34 s for 16,000). */
const LIST_TARGET_MS = 2000;

/** 5. `drover list J` (a table of 100,000 tasks) vs `drover status J` on the same ledger. */
export function benchList(repeat: number): Result[] {
  const n = Math.max(3, repeat);
  progress('list: building the 100,000-task job...');
  const big = buildBigJob(false);
  try {
    const samples: Record<'list' | 'status', number[]> = { list: [], status: [] };
    const cpu: Record<'list' | 'status', number[]> = { list: [], status: [] };
    for (let i = 0; i < n; i++) {
      for (const s of rotated(['list', 'status'] as const, i)) {
        const r: Run = drover(s === 'list' ? ['list', big.jobname] : ['status', big.jobname], big.dir);
        if (s === 'list') checkTable(r.stdout, big.tasks);
        samples[s].push(r.ms);
        cpu[s].push(r.cpuMs);
      }
    }
    const list = side('drover list J', samples.list, cpu.list);
    progress(`list: ${n} runs each; median ${fmtMs(list.median)}`);
    const result = compare(
      'local.list-100k',
      'drover list J (a table of 100,000 tasks) vs drover status J',
      list,
      side('drover status J', samples.status, cpu.status),
      undefined,
      [`every run printed a header and ${big.tasks} rows of aligned columns`],
      [
        `target: under ${fmtMs(LIST_TARGET_MS)} — ${list.median <= LIST_TARGET_MS ? 'met' : 'MISSED'} (median ${fmtMs(list.median)})`,
        'status reads the same ledger and prints one screen; the difference is the 100,000 rows',
      ],
    );
    return [result];
  } finally {
    removeDir(big.dir);
  }
}

/** The table has a header and one row per task, each row's state column where the header puts it. */
function checkTable(stdout: string, tasks: number): void {
  const rows = stdout.split('\n').filter((l) => l !== '');
  if (rows.length !== tasks + 1)
    throw new BenchError(`drover list printed ${rows.length - 1} rows, not ${tasks}`);
  const at = rows[0]!.indexOf('state');
  for (const row of [rows[1]!, rows[tasks]!]) {
    if (row.slice(at, at + 'succeeded'.length) !== 'succeeded')
      throw new BenchError(`drover list: state column not aligned in ${JSON.stringify(row)}`);
  }
}
