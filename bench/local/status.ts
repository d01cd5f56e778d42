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
import { checkAllSucceeded } from './check.js';

/** 3. `drover status J` on 100,000 recorded tasks vs `drover --version`. */
export function benchStatus(repeat: number, real: boolean): Result[] {
  const n = repeat * 6;
  progress(
    real
      ? 'status: building the 100,000-task job with a real launch (minutes)...'
      : 'status: building the 100,000-task job...',
  );
  const big = buildBigJob(real);
  try {
    const verify = drover(['status', big.jobname, '--json'], big.dir);
    checkAllSucceeded(verify.stdout, big.jobname, big.tasks);
    progress(`status: ledger ready (${big.how}); ${big.recordWhat} took ${fmtMs(big.recordMs)}`);
    const env = droverEnv();
    const samples: Record<string, number[]> = { status: [], json: [], version: [] };
    const cpu: Record<string, number[]> = { status: [], json: [], version: [] };
    for (let i = 0; i < n; i++) {
      for (const s of rotated(['status', 'json', 'version'], i)) {
        let r: Run;
        if (s === 'version') {
          r = runOk('drover --version', NODE, [DROVER_BIN, '--version'], { cwd: big.dir, env });
        } else if (s === 'status') {
          r = drover(['status', big.jobname], big.dir);
          // 100000 or 100,000: the human form may group digits.
          if (!/\b100[,.\u202f ]?000 succeeded/.test(r.stdout))
            throw new BenchError(`drover status ${big.jobname} did not say '${big.tasks} succeeded'`);
        } else {
          r = drover(['status', big.jobname, '--json'], big.dir);
          checkAllSucceeded(r.stdout, big.jobname, big.tasks);
        }
        samples[s]!.push(r.ms);
        cpu[s]!.push(r.cpuMs);
      }
    }
    progress(`status: ${n} runs each`);
    const version = side('drover --version', samples.version!, cpu.version);
    const notes = [`ledger built with ${big.how}`];
    return [
      compare(
        'local.status-100k',
        'drover status J (100,000 succeeded tasks) vs drover --version',
        side('drover status J', samples.status!, cpu.status),
        version,
        3.0,
        [`every run said '${big.tasks} succeeded'`],
        notes,
      ),
      compare(
        'local.status-100k.json',
        'drover status J --json (100,000 tasks) vs drover --version',
        side('drover status J --json', samples.json!, cpu.json),
        version,
        undefined,
        [`every run's JSON had tasks ${big.tasks} and counts.succeeded ${big.tasks}`],
        notes,
      ),
      {
        id: real ? 'local.status-100k.launch' : 'local.status-100k.ingest',
        title: `${big.recordWhat}, once`,
        drover: side(real ? 'drover launch (100,000 tasks)' : 'first drover status --json', [big.recordMs]),
        verdict: 'info',
        checks: ['the status after it counted 100,000 succeeded'],
        notes,
      },
    ];
  } finally {
    removeDir(big.dir);
  }
}
