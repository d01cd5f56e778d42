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
 * §3's budget is 100 for a 100,000-task launch). With DROVER_BENCH_LAUNCH_100K=1 (or DROVER_BENCH_LAUNCH_TASKS=N),
 * also a big job's whole life: see bigLaunch (minutes on 2 cores).
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
  type Side = 'drover' | 'files' | 'loop';
  const samples: Record<Side, number[]> = { drover: [], files: [], loop: [] };
  const cpu: Record<Side, number[]> = { drover: [], files: [], loop: [] };
  let files = 0;
  let perTaskFiles = 0;
  runSides(['drover', 'files', 'loop'] as const, reps, 'spawn-limit', (s, dir, i) => {
    if (s !== 'loop') {
      // drover as launched by default (--logs segments), and with a log file per attempt (--logs files).
      drover(['prelaunch', '+command', '/bin/true', '+jobname', 'b', '+pos-arg', ...range(n), '+q'], dir);
      const before = countFiles(path.join(dir, '.drover'));
      const logs = s === 'files' ? ['--logs', 'files'] : [];
      const r = drover(
        ['launch', '--jobname', 'b', '--backend', 'local', '--max-tasks', '2', '-q', ...logs],
        dir,
      );
      const made = countFiles(path.join(dir, '.drover')) - before;
      if (s === 'drover') files = made;
      else perTaskFiles = made;
      checkAllSucceeded(drover(['status', 'b', '--json'], dir).stdout, 'b', n);
      samples[s].push(r.ms);
      cpu[s].push(r.cpuMs);
      progress(
        `spawn-limit ${i + 1}/${reps} drover${logs.length ? ' --logs files' : ''}: ${fmtMs(r.ms)}, ${made} files created`,
      );
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
      ['timed: only `drover launch` (default: --logs segments); the loop writes no logs or records'],
    ),
    compare(
      'local.launch-10k.logs-files',
      `launch ${n} × /bin/true N, 2 at a time: a log file per attempt (--logs files) vs slot segments (the default)`,
      side('drover launch --max-tasks 2 -q --logs files', samples.files, cpu.files),
      side('drover launch --max-tasks 2 -q', samples.drover, cpu.drover),
      undefined,
      [`after every run, drover status reported all ${n} tasks succeeded`],
      [`--logs files created ${perTaskFiles} files, segments ${files}`],
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
  if (process.env.DROVER_BENCH_LAUNCH_100K === '1' || process.env.DROVER_BENCH_LAUNCH_TASKS)
    results.push(...bigLaunch());
  return results;
}

/** One timed step of the big launch, with its largest process's peak memory (GNU time's %M). */
function measured(label: string, args: string[], dir: string): { ms: number; mb: number; stdout: string } {
  const r = runOk(
    label,
    '/usr/bin/time',
    ['-f', '%M', process.execPath, path.join(REPO_ROOT, 'bin', 'drover.cjs'), ...args],
    {
      cwd: dir,
      timeoutMs: 60 * 60_000,
    },
  );
  return { ms: r.ms, mb: Number(r.stderr.trim().split('\n').at(-1)) / 1024, stdout: r.stdout };
}

/**
 * The whole life of a big job (DROVER_BENCH_LAUNCH_TASKS, or 100,000 with DROVER_BENCH_LAUNCH_100K=1): prelaunch,
 * a local launch of `/bin/true` 2 at a time, then status, list --json and logs of its last task — each step's time
 * and its largest process's peak RSS, the launch's against 150 MB and prelaunch's against 300 MB (issue 14), and
 * the files the launch created against 100.
 */
function bigLaunch(): Result[] {
  if (!fs.existsSync('/usr/bin/time')) {
    return [
      notRun(
        'local.launch-big',
        'a big job, start to finish',
        'skipped',
        'no /usr/bin/time (apt-get install time)',
        1,
      ),
    ];
  }
  const text = process.env.DROVER_BENCH_LAUNCH_TASKS ?? '100000';
  if (!/^[1-9][0-9]*$/.test(text))
    throw new BenchError(`DROVER_BENCH_LAUNCH_TASKS '${text}' is not a whole number ≥ 1`);
  const n = Number(text);
  const dir = tempDir('launch-big');
  try {
    progress(`launch-big: ${n} tasks: prelaunch, launch 2 at a time (minutes), status, list --json, logs...`);
    // A million values would not fit on a command line: a grid of 1000 × n/1000 when n allows.
    const sweep =
      n > 100_000 && n % 1000 === 0
        ? ['+arg', '--a', ...range(1000), '+arg', '--b', ...range(n / 1000)]
        : ['+pos-arg', ...range(n)];
    const pre = measured(
      'drover prelaunch',
      ['prelaunch', '+command', '/bin/true', '+jobname', 'b', ...sweep, '+q'],
      dir,
    );
    const before = countFiles(path.join(dir, '.drover'));
    const run = measured('drover launch', ['launch', 'b', '--max-tasks', '2', '-q'], dir);
    const files = countFiles(path.join(dir, '.drover')) - before;
    const status = measured('drover status', ['status', 'b', '--json'], dir);
    checkAllSucceeded(status.stdout, 'b', n);
    const list = measured('drover list --json', ['list', 'b', '--json'], dir);
    const logs = measured('drover logs', ['logs', 'b', String(n)], dir);
    progress(`launch-big: prelaunch ${fmtMs(pre.ms)}, launch ${fmtMs(run.ms)}, ${files} files`);
    const after = [
      `status ${fmtMs(status.ms)} ${status.mb.toFixed(1)} MB`,
      `list --json ${fmtMs(list.ms)} ${list.mb.toFixed(1)} MB`,
      `logs of task ${n} ${fmtMs(logs.ms)} ${logs.mb.toFixed(1)} MB`,
    ].join('; ');
    return [
      compare(
        'local.launch-big.prelaunch',
        `prelaunch of a ${n}-task job: its peak memory vs 300 MB`,
        side('max RSS', [pre.mb], undefined, 'MB'),
        side('budget', [300], undefined, 'MB'),
        1.0,
        [`${n} tasks made`],
        [`${fmtMs(pre.ms)} wall`],
      ),
      compare(
        'local.launch-big.launch',
        `local launch of the ${n} tasks, 2 at a time: its largest process's peak memory vs ${MEMORY_BUDGET_MB} MB`,
        side('max RSS', [run.mb], undefined, 'MB'),
        side('budget', [MEMORY_BUDGET_MB], undefined, 'MB'),
        1.0,
        [`drover status: all ${n} succeeded`],
        [`${fmtMs(run.ms)} wall; then ${after}`],
      ),
      compare(
        'local.launch-big.files',
        `files created by a ${n}-task local launch vs ${FILES_BUDGET}`,
        side('files', [files], undefined, 'files'),
        side('budget', [FILES_BUDGET], undefined, 'files'),
        1.0,
        ['counted under .drover/ before and after the launch'],
      ),
    ];
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
