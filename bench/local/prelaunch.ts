import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { compare, type Result, side } from '../result.js';
import {
  BenchError,
  drover,
  fmtMs,
  NODE,
  progress,
  type Run,
  removeDir,
  rotated,
  runOk,
  tempDir,
} from '../util.js';
import { bigSweep } from './big-job.js';

/** The reference of benchmark 4: a plain Node script that writes the same 100,000-entry jobfile. */
const WRITE_JOBFILE = `
const p = [];
let id = 1;
for (let s = 1; s <= 1000; s++)
  for (let l = 1; l <= 100; l++)
    p.push('"' + id++ + '": [' + JSON.stringify('python train.py --lr ' + l + ' --seed ' + s) + ', ""]');
require('fs').writeFileSync('jobs.json', '{' + p.join(', ') + '}');
`;

/** 4. A 100 × 1000 prelaunch vs writing the same jobfile with `node -e`. */
export function benchPrelaunch(repeat: number): Result[] {
  const n = 100_000;
  const samples: Record<string, number[]> = { drover: [], node: [] };
  const cpu: Record<string, number[]> = { drover: [], node: [] };
  const hashes: Record<string, string> = {};
  const sha = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');
  for (let i = 0; i < repeat; i++) {
    for (const s of rotated(['drover', 'node'], i)) {
      const dir = tempDir('prelaunch');
      try {
        let r: Run;
        if (s === 'drover') {
          r = drover(bigSweep('big', 'python train.py'), dir);
          if (!r.stdout.includes(`Prelaunched ${n} jobs`))
            throw new BenchError(`drover prelaunch did not say 'Prelaunched ${n} jobs'`);
          const file = path.join(dir, '.drover', 'jobs', 'big', 'jobs.json');
          const jobs = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, [string, string]>;
          const keys = Object.keys(jobs).length;
          if (keys !== n) throw new BenchError(`the jobfile has ${keys} entries, expected ${n}`);
          if (
            jobs['1']?.[0] !== 'python train.py --lr 1 --seed 1' ||
            jobs[String(n)]?.[0] !== 'python train.py --lr 100 --seed 1000'
          )
            throw new BenchError(`the jobfile's first or last command is not the grid's: ${jobs['1']?.[0]}`);
          hashes.drover ??= sha(file);
        } else {
          r = runOk('node -e (write jobfile)', NODE, ['-e', WRITE_JOBFILE], { cwd: dir });
          hashes.node ??= sha(path.join(dir, 'jobs.json'));
        }
        samples[s]!.push(r.ms);
        cpu[s]!.push(r.cpuMs);
        progress(`prelaunch ${i + 1}/${repeat} ${s}: ${fmtMs(r.ms)} (cpu ${fmtMs(r.cpuMs)})`);
      } finally {
        removeDir(dir);
      }
    }
  }
  const same = hashes.drover === hashes.node;
  return [
    compare(
      'local.prelaunch-100k',
      'drover prelaunch 100 × 1000 grid (100,000 tasks) vs node -e writing the same jobfile',
      side('drover prelaunch', samples.drover!, cpu.drover),
      side('node -e (write jobfile)', samples.node!, cpu.node),
      undefined,
      [`every jobfile had ${n} entries, first and last commands as the grid says`],
      [
        same
          ? 'the reference wrote byte-for-byte the jobfile drover wrote'
          : 'the reference jobfile differs from drover’s (check WRITE_JOBFILE)',
        'drover also records the 100,000 tasks in its ledger; the reference only writes the file',
      ],
    ),
  ];
}
