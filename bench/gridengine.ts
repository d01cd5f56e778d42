import fs from 'node:fs';
import path from 'node:path';
import { checkAllSucceeded } from './local/check.js';
import { compare, notRun, type Result, side } from './result.js';
import { BenchError, drover, fmtMs, progress, range, run, runOk, runSides, sleepMs } from './util.js';

/**
 * Grid Engine mode: 500 short tasks (`/bin/true N`) on the real cluster, three ways, interleaved — drover with
 * one task per array element, drover packed 100 tasks per element, and a plain `qsub -t 1-500` of a script
 * running the same command. Each is timed from submission until its array jobs have left qstat; then drover's
 * ledger (or qacct, for the plain array) must show all 500 succeeded.
 */

const N = 500;
const PACK = 100;
const SIDES = ['one-per-task', 'packed', 'qsub'] as const;
type SideName = (typeof SIDES)[number];

/** Job ids Grid Engine still lists (qstat -xml of the caller's jobs). */
function listed(): Set<string> {
  const r = runOk('qstat', 'qstat', ['-xml']);
  return new Set([...r.stdout.matchAll(/<JB_job_number>\s*(\d+)\s*</g)].map((m) => m[1]!));
}

/** Wait until none of `ids` is in qstat any more; polls every 250 ms, gives up after `limitMs`. */
function waitGone(ids: readonly string[], limitMs = 20 * 60_000): void {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const left = listed();
    if (!ids.some((id) => left.has(id))) return;
    if (Date.now() > deadline)
      throw new BenchError(`job ${ids.join(',')} still in qstat after ${limitMs / 1000} s`);
    sleepMs(250);
  }
}

/** `drover launch --backend gridengine` of job b in `dir`, timed until its arrays have left qstat. */
function droverSide(dir: string, extra: string[]): number {
  const t0 = Date.now();
  const r = drover(['launch', '--backend', 'gridengine', '--jobname', 'b', '--json', ...extra], dir);
  const ids = (JSON.parse(r.stdout) as { handles: { arrays: { id: string }[] } }).handles.arrays.map(
    (a) => a.id,
  );
  waitGone(ids);
  const ms = Date.now() - t0;
  checkAllSucceeded(drover(['status', 'b', '--json'], dir).stdout, 'b', N);
  return ms;
}

/** The plain array: `qsub -t 1-500` of a script running `/bin/true $SGE_TASK_ID`, timed until it left qstat. */
function qsubSide(dir: string): number {
  const script = path.join(dir, 'task.sh');
  fs.writeFileSync(script, '#!/bin/bash\n/bin/true "$SGE_TASK_ID"\n');
  fs.mkdirSync(path.join(dir, 'out'));
  const out = `${path.join(dir, 'out')}/`;
  const t0 = Date.now();
  const r = runOk(
    'qsub',
    'qsub',
    ['-terse', '-t', `1-${N}`, '-S', '/bin/bash', '-cwd', '-o', out, '-e', out, script],
    {
      cwd: dir,
    },
  );
  const id = r.stdout.trim().split('.')[0]!;
  waitGone([id]);
  const ms = Date.now() - t0;
  // Every element must be accounted with exit status 0 (qacct lags qstat by about a second).
  const deadline = Date.now() + 60_000;
  for (;;) {
    const acct = run('qacct', ['-j', id]);
    const ok = [...acct.stdout.matchAll(/^exit_status\s+0\s*$/gm)].length;
    if (ok === N) break;
    if (Date.now() > deadline)
      throw new BenchError(`qacct shows ${ok} of ${N} elements of job ${id} with exit 0`);
    sleepMs(500);
  }
  return ms;
}

/** Run the Grid Engine benchmarks `repeat` times each. */
export function runGridEngine(repeat: number): Result[] {
  const title1 = `${N} × /bin/true N, packed ${PACK} per array task vs one per array task`;
  const title2 = `${N} × /bin/true N, one per array task vs a plain qsub -t 1-${N}`;
  const probe = run('qstat', ['-xml']);
  if (probe.status !== 0) {
    const why =
      'no Grid Engine here (qstat failed): start one with sudo bash scripts/test-cluster/gridengine-up.sh';
    return [
      notRun('gridengine.packed-500', title1, 'skipped', why, 0.1),
      notRun('gridengine.array-500.qsub', title2, 'skipped', why, 1.2),
    ];
  }
  const samples: Record<SideName, number[]> = { 'one-per-task': [], packed: [], qsub: [] };
  try {
    runSides(SIDES, repeat, 'gridengine', (s, dir, i) => {
      if (s !== 'qsub') {
        drover(['prelaunch', '+command', '/bin/true', '+jobname', 'b', '+pos-arg', ...range(N), '+q'], dir);
      }
      const ms =
        s === 'qsub'
          ? qsubSide(dir)
          : droverSide(dir, s === 'packed' ? ['--tasks-per-node', String(PACK)] : []);
      samples[s].push(ms);
      progress(`gridengine ${i + 1}/${repeat} ${s}: ${fmtMs(ms)}`);
    });
  } catch (err) {
    if (!(err instanceof BenchError)) throw err;
    return [
      notRun('gridengine.packed-500', title1, 'FAILED', err.message, 0.1),
      notRun('gridengine.array-500.qsub', title2, 'FAILED', err.message, 1.2),
    ];
  }
  const one = side('drover launch --backend gridengine (one task per element)', samples['one-per-task']);
  const checks = [
    `after every drover run, 'drover status b --json' reported tasks ${N} and counts.succeeded ${N}`,
    `after every plain array, qacct showed exit_status 0 for all ${N} elements`,
  ];
  const notes = [
    'timed: from the submitting command until every array job of the run has left qstat (polled every 250 ms); the prelaunch is not timed',
    'one-per-task elements run drover’s single-task runner (Perl); packed elements run drover’s runner (Node), with NSLOTS = 1 slot each',
  ];
  return [
    compare(
      'gridengine.packed-500',
      title1,
      side(`drover launch --backend gridengine --tasks-per-node ${PACK}`, samples.packed),
      one,
      0.1,
      checks,
      notes,
    ),
    compare(
      'gridengine.array-500.qsub',
      title2,
      one,
      side(`qsub -t 1-${N} task.sh (/bin/true $SGE_TASK_ID)`, samples.qsub),
      1.2,
      checks,
      notes,
    ),
  ];
}
