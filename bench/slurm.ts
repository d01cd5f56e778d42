import fs from 'node:fs';
import path from 'node:path';
import { checkAllSucceeded } from './local/check.js';
import { compare, notRun, type Result, side } from './result.js';
import { BenchError, drover, fmtMs, progress, range, run, runOk, runSides } from './util.js';

/**
 * Slurm mode: 1000 short tasks (`/bin/true N`) on the real test cluster, three ways, interleaved — drover with
 * one task per array element, drover packed 100 tasks per element, and a plain `sbatch --array=1-1000` of a
 * script that runs the same command. Each is timed from submission until its arrays have left squeue (and,
 * for drover, its `status --json` says all 1000 succeeded, which is timed too).
 */

const N = 1000;
const PACK = 100;
const SIDES = ['one-per-task', 'packed', 'sbatch'] as const;
type SideName = (typeof SIDES)[number];

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Wait until squeue lists none of `ids`; polls every 100 ms, gives up after `limitMs`. */
function waitGone(ids: readonly string[], limitMs = 20 * 60_000): void {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const r = run('squeue', ['-h', '-j', ids.join(','), '-o', '%i']);
    const gone = (r.status === 0 && r.stdout.trim() === '') || /invalid job id/i.test(r.stderr);
    if (gone) return;
    if (Date.now() > deadline)
      throw new BenchError(`array ${ids.join(',')} still in squeue after ${limitMs / 1000} s`);
    sleep(100);
  }
}

/** Wait (up to a minute) until the cluster runs nothing else, so each side starts on an empty queue. */
function waitQuiet(): void {
  const deadline = Date.now() + 60_000;
  while (run('squeue', ['-h', '-o', '%i']).stdout.trim() !== '' && Date.now() < deadline) sleep(500);
}

/** `drover launch --backend slurm` of job b in `dir`, timed until its arrays left squeue and status says done. */
function droverSide(dir: string, extra: string[]): number {
  const t0 = Date.now();
  const r = drover(['launch', '--backend', 'slurm', '--jobname', 'b', '--json', ...extra], dir);
  const ids = (JSON.parse(r.stdout) as { handles: { arrays: { id: string }[] } }).handles.arrays.map(
    (a) => a.id,
  );
  waitGone(ids);
  const status = drover(['status', 'b', '--json'], dir);
  const ms = Date.now() - t0;
  checkAllSucceeded(status.stdout, 'b', N);
  return ms;
}

/** The plain array: `sbatch --array=1-1000` of a script that runs line N of a command file. */
function sbatchSide(dir: string): number {
  fs.writeFileSync(
    path.join(dir, 'commands.txt'),
    range(N)
      .map((i) => `/bin/true ${i}\n`)
      .join(''),
  );
  const script = path.join(dir, 'task.sh');
  fs.writeFileSync(
    script,
    `#!/bin/bash\ncommand=$(sed -n "\${SLURM_ARRAY_TASK_ID}{p;q}" ${JSON.stringify(path.join(dir, 'commands.txt'))})\n/bin/sh -c "$command"\n`,
  );
  fs.mkdirSync(path.join(dir, 'out'));
  const t0 = Date.now();
  const r = runOk('sbatch', 'sbatch', [
    '--parsable',
    `--array=1-${N}`,
    '--job-name=plain',
    `--output=${path.join(dir, 'out', 'slurm-%A_%a.out')}`,
    script,
  ]);
  const id = r.stdout.trim().split(';')[0]!;
  waitGone([id]);
  const ms = Date.now() - t0;
  const outs = fs.readdirSync(path.join(dir, 'out')).length;
  if (outs !== N) throw new BenchError(`the plain array ${id} left ${outs} of ${N} element output files`);
  return ms;
}

/** Run the Slurm benchmarks `repeat` times each. */
export function runSlurm(repeat: number): Result[] {
  const title1 = `${N} × /bin/true N, packed ${PACK} per array element vs one per array element`;
  const title2 = `${N} × /bin/true N, one per array element vs a plain sbatch --array=1-${N}`;
  const probe = run('sinfo', ['-h', '-o', '%T']);
  if (probe.status !== 0 || !/idle|mixed|allocated/.test(probe.stdout)) {
    const why = 'no Slurm here (sinfo failed): start one with sudo bash scripts/test-cluster/slurm-up.sh';
    return [
      notRun('slurm.packed-1000', title1, 'skipped', why, 0.1),
      notRun('slurm.array-1000.sbatch', title2, 'skipped', why, 1.2),
    ];
  }
  const samples: Record<SideName, number[]> = { 'one-per-task': [], packed: [], sbatch: [] };
  try {
    runSides(SIDES, repeat, 'slurm', (s, dir, i) => {
      if (s !== 'sbatch') {
        drover(['prelaunch', '+command', '/bin/true', '+jobname', 'b', '+pos-arg', ...range(N), '+q'], dir);
      }
      waitQuiet();
      const ms =
        s === 'sbatch'
          ? sbatchSide(dir)
          : droverSide(dir, s === 'packed' ? ['--tasks-per-node', String(PACK)] : []);
      samples[s].push(ms);
      progress(`slurm ${i + 1}/${repeat} ${s}: ${fmtMs(ms)}`);
    });
  } catch (err) {
    if (!(err instanceof BenchError)) throw err;
    return [
      notRun('slurm.packed-1000', title1, 'FAILED', err.message, 0.1),
      notRun('slurm.array-1000.sbatch', title2, 'FAILED', err.message, 1.2),
    ];
  }
  const one = side('drover launch --backend slurm (one task per element)', samples['one-per-task']);
  const checks = [
    `after every drover run, 'drover status b --json' reported tasks ${N} and counts.succeeded ${N}`,
    `every plain array left ${N} element output files`,
  ];
  const notes = [
    'timed: from the submitting command until every array of the run has left squeue (polled every 100 ms), plus drover status --json for drover; the prelaunch is not timed',
    'one-per-element arrays run drover’s bash element runner; packed elements run drover’s Python element runner (bash’s where the node has no Python 3.8), 1 task at a time (the 1 CPU Slurm gives each)',
    'each side starts once the cluster’s queue is empty; element output goes to one file per element on both sides',
  ];
  return [
    compare(
      'slurm.packed-1000',
      title1,
      side(`drover launch --backend slurm --tasks-per-node ${PACK}`, samples.packed),
      one,
      0.1,
      checks,
      notes,
    ),
    compare(
      'slurm.array-1000.sbatch',
      title2,
      one,
      side(`sbatch --array=1-${N} task.sh (/bin/true N)`, samples.sbatch),
      1.2,
      checks,
      notes,
    ),
  ];
}
