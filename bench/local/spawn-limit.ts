import fs from 'node:fs';
import path from 'node:path';
import { compare, notRun, type Result, side } from '../result.js';
import {
  BenchError,
  drover,
  fmtMs,
  progress,
  REPO_ROOT,
  range,
  runOk,
  runSides,
  tempDir,
  which,
} from '../util.js';
import { checkAllSucceeded } from './check.js';

/** Issue 14 §4: a local launch of short tasks within 1.5× of the machine's bare spawn loop. */
const LOOP_TARGET = 1.5;
/** Issue 14 §3: a 100,000-task launch creates at most this many files in all. */
const FILES_BUDGET = 100;
/** Issue 14 §4: the launch of 100,000 tasks within this much memory (the largest process's peak RSS). */
const MEMORY_BUDGET_MB = 150;

/** Every file under a folder (recursively). */
function countFiles(dir: string): number {
  let n = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory()) n += countFiles(path.join(dir, e.name));
    else n++;
  }
  return n;
}

/** Build bench/c/spawn-loop.c with the machine's C compiler, or say why not. */
function buildLoop(): string {
  const cc = which('cc') ?? which('gcc');
  if (!cc) throw new BenchError('no C compiler (cc): apt-get install gcc');
  const out = path.join(tempDir('spawn-loop-bin'), 'spawn-loop');
  runOk('cc spawn-loop.c', cc, ['-O2', '-o', out, path.join(REPO_ROOT, 'bench', 'c', 'spawn-loop.c')]);
  return out;
}

/**
 * 8. 10,000 × `/bin/true N` through `drover launch --max-tasks 2` against the physical limit: a C program looping
 * posix_spawn + waitpid in 2 processes (no logs, no records). Also counts the files the launch created (issue 14
 * §3's budget is 100 for a 100,000-task launch). With DROVER_BENCH_LAUNCH_100K=1, also a 100,000-task launch:
 * its time, its largest process's peak memory and its files (minutes on 2 cores).
 */
export function benchSpawnLimit(repeat: number): Result[] {
  const n = 10_000;
  const title = `launch ${n} × /bin/true N, 2 at a time, vs a C posix_spawn loop in 2 processes`;
  let loop: string;
  try {
    loop = buildLoop();
  } catch (err) {
    return [notRun('local.launch-10k.spawn-loop', title, 'skipped', (err as Error).message, LOOP_TARGET)];
  }
  const reps = Math.min(repeat, 3);
  const samples: Record<'drover' | 'loop', number[]> = { drover: [], loop: [] };
  const cpu: Record<'drover' | 'loop', number[]> = { drover: [], loop: [] };
  let files = 0;
  runSides(['drover', 'loop'] as const, reps, 'spawn-limit', (s, dir, i) => {
    if (s === 'drover') {
      drover(['prelaunch', '+command', '/bin/true', '+jobname', 'b', '+pos-arg', ...range(n), '+q'], dir);
      const before = countFiles(path.join(dir, '.drover'));
      const r = drover(['launch', '--jobname', 'b', '--backend', 'local', '--max-tasks', '2', '-q'], dir);
      files = countFiles(path.join(dir, '.drover')) - before;
      checkAllSucceeded(drover(['status', 'b', '--json'], dir).stdout, 'b', n);
      samples.drover.push(r.ms);
      cpu.drover.push(r.cpuMs);
      progress(`spawn-limit ${i + 1}/${reps} drover: ${fmtMs(r.ms)}, ${files} files created`);
    } else {
      const r = runOk('spawn-loop', loop, [String(n), '2', '/bin/true'], { cwd: dir });
      samples.loop.push(r.ms);
      cpu.loop.push(r.cpuMs);
      progress(`spawn-limit ${i + 1}/${reps} loop: ${fmtMs(r.ms)}`);
    }
  });
  const results = [
    compare(
      'local.launch-10k.spawn-loop',
      title,
      side('drover launch --max-tasks 2 -q', samples.drover, cpu.drover),
      side('spawn-loop (C: posix_spawn + waitpid, 2 processes)', samples.loop, cpu.loop),
      LOOP_TARGET,
      [`after every drover run, drover status reported all ${n} tasks succeeded`, 'every loop run exited 0'],
      ['timed: only `drover launch`; the loop writes no logs or records'],
    ),
    compare(
      'local.launch-10k.files',
      `files created by a ${n}-task local launch vs the ${FILES_BUDGET}-file budget of a 100,000-task one`,
      side('files', [files], undefined, 'files'),
      side('budget', [FILES_BUDGET], undefined, 'files'),
      1.0,
      [`counted under .drover/ before and after the last drover run`],
      [`${files} files (logs, records, the launch's own)`],
    ),
  ];
  if (process.env.DROVER_BENCH_LAUNCH_100K === '1') results.push(...launch100k());
  return results;
}

/** A 100,000-task local launch: time, the largest process's peak RSS (GNU time's %M), files created. */
function launch100k(): Result[] {
  const time = '/usr/bin/time';
  if (!fs.existsSync(time)) {
    return [
      notRun('local.launch-100k.memory', '100,000-task launch memory', 'skipped', 'no /usr/bin/time', 1),
    ];
  }
  const n = 100_000;
  const dir = tempDir('launch-100k');
  drover(['prelaunch', '+command', '/bin/true', '+jobname', 'b', '+pos-arg', ...range(n), '+q'], dir);
  const before = countFiles(path.join(dir, '.drover'));
  progress(`launch-100k: ${n} tasks, 2 at a time (minutes)...`);
  const r = runOk(
    'drover launch (100k)',
    time,
    [
      '-f',
      '%M',
      process.execPath,
      path.join(REPO_ROOT, 'bin', 'drover.cjs'),
      'launch',
      'b',
      '--max-tasks',
      '2',
      '-q',
    ],
    { cwd: dir, timeoutMs: 30 * 60_000 },
  );
  const peakMb = Number(r.stderr.trim().split('\n').at(-1)) / 1024;
  const files = countFiles(path.join(dir, '.drover')) - before;
  checkAllSucceeded(drover(['status', 'b', '--json'], dir).stdout, 'b', n);
  fs.rmSync(dir, { recursive: true, force: true });
  progress(`launch-100k: ${fmtMs(r.ms)}, peak ${peakMb.toFixed(1)} MB, ${files} files`);
  return [
    compare(
      'local.launch-100k.memory',
      `peak memory of a ${n}-task local launch (its largest process) vs ${MEMORY_BUDGET_MB} MB`,
      side('max RSS', [peakMb], undefined, 'MB'),
      side('budget', [MEMORY_BUDGET_MB], undefined, 'MB'),
      1.0,
      [`drover status: all ${n} succeeded`],
      [`${fmtMs(r.ms)} wall`],
    ),
    compare(
      'local.launch-100k.files',
      `files created by a ${n}-task local launch vs ${FILES_BUDGET}`,
      side('files', [files], undefined, 'files'),
      side('budget', [FILES_BUDGET], undefined, 'files'),
      1.0,
      [`counted under .drover/`],
      [],
    ),
  ];
}
