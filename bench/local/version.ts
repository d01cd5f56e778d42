import fs from 'node:fs';
import path from 'node:path';
import { compare, type Result, side } from '../result.js';
import {
  BenchError,
  DROVER_BIN,
  droverEnv,
  NODE,
  progress,
  REPO_ROOT,
  removeDir,
  rotated,
  runOk,
  tempDir,
} from '../util.js';

/** 2. `drover --version` vs `node -e 0`. */
export function benchVersion(repeat: number): Result[] {
  const n = repeat * 6;
  const dir = tempDir('version');
  const expected = (
    JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }
  ).version;
  const env = droverEnv();
  const samples: Record<string, number[]> = { drover: [], node: [] };
  const cpu: Record<string, number[]> = { drover: [], node: [] };
  const once = (s: string) =>
    s === 'drover'
      ? runOk('drover --version', NODE, [DROVER_BIN, '--version'], { cwd: dir, env })
      : runOk('node -e 0', NODE, ['-e', '0'], { cwd: dir, env });
  once('drover');
  once('node'); // warm-up, not timed
  for (let i = 0; i < n; i++) {
    for (const s of rotated(['drover', 'node'], i)) {
      const r = once(s);
      if (s === 'drover' && r.stdout.trim() !== expected)
        throw new BenchError(`drover --version printed '${r.stdout.trim()}', expected '${expected}'`);
      samples[s]!.push(r.ms);
      cpu[s]!.push(r.cpuMs);
    }
  }
  removeDir(dir);
  progress(`version: ${n} runs each`);
  return [
    compare(
      'local.version',
      'drover --version vs node -e 0',
      side('drover --version', samples.drover!, cpu.drover),
      side('node -e 0', samples.node!, cpu.node),
      1.3,
      [`every run printed the package version ${expected}`],
    ),
  ];
}
