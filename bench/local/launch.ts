import fs from 'node:fs';
import path from 'node:path';
import { compare, notRun, type Result, side } from '../result.js';
import { BenchError, drover, fmtMs, progress, type Run, range, runOk, runSides, which } from '../util.js';
import { checkAllSucceeded } from './check.js';

/** The xargs-with-logs task: what drover's runner does for each task, minus the records and the ledger. */
const WITH_LOGS = '/bin/true {} >logs/{}.1.out 2>logs/{}.1.err';

/** 1. 2000 `/bin/true N` through `drover launch` vs xargs -P2 and GNU parallel -j2. */
export function benchLaunch(repeat: number): Result[] {
  const n = 2000;
  const values = range(n);
  const title = `launch ${n} × /bin/true N, 2 at a time`;
  const parallelBin = which('parallel');
  // xargs-logs: xargs doing what drover does besides running the task, a stdout and a stderr file per task.
  const sides = parallelBin
    ? (['drover', 'xargs', 'xargs-logs', 'parallel'] as const)
    : (['drover', 'xargs', 'xargs-logs'] as const);
  const samples: Record<string, number[]> = { drover: [], xargs: [], 'xargs-logs': [], parallel: [] };
  const cpu: Record<string, number[]> = { drover: [], xargs: [], 'xargs-logs': [], parallel: [] };
  runSides(sides, repeat, 'launch', (s, dir, i) => {
    let r: Run;
    if (s === 'drover') {
      drover(['prelaunch', '+command', '/bin/true', '+jobname', 'b', '+pos-arg', ...values, '+q'], dir);
      r = drover(['launch', '--jobname', 'b', '--backend', 'local', '--max-tasks', '2', '-q'], dir);
      checkAllSucceeded(drover(['status', 'b', '--json'], dir).stdout, 'b', n);
    } else if (s === 'xargs') {
      r = runOk('xargs', 'sh', ['-c', `seq ${n} | xargs -P2 -I{} sh -c '/bin/true {}'`], { cwd: dir });
    } else if (s === 'xargs-logs') {
      r = runOk(
        'xargs (logs)',
        'sh',
        ['-c', `mkdir logs && seq ${n} | xargs -P2 -I{} sh -c '${WITH_LOGS}'`],
        {
          cwd: dir,
        },
      );
      const files = fs.readdirSync(path.join(dir, 'logs')).length;
      if (files !== 2 * n) throw new BenchError(`xargs with logs wrote ${files} log files, not ${2 * n}`);
    } else {
      r = runOk('parallel', parallelBin!, ['-j2', '/bin/true', ':::', ...values], { cwd: dir });
    }
    samples[s]!.push(r.ms);
    cpu[s]!.push(r.cpuMs);
    progress(`launch ${i + 1}/${repeat} ${s}: ${fmtMs(r.ms)} (cpu ${fmtMs(r.cpuMs)})`);
  });
  const d = side('drover launch --max-tasks 2 -q', samples.drover!, cpu.drover);
  const checks = [
    `after every drover run, 'drover status b --json' reported tasks ${n} and counts.succeeded ${n}`,
    'every reference run exited 0',
  ];
  const notes = [
    'timed: only `drover launch` (the prelaunch before it is not timed); each run in a fresh folder',
  ];
  const results = [
    compare(
      'local.launch-2000.xargs',
      `${title} vs xargs -P2`,
      d,
      side("seq | xargs -P2 -I{} sh -c '/bin/true {}'", samples.xargs!, cpu.xargs),
      1.0,
      checks,
      notes,
    ),
  ];
  results.push(
    parallelBin
      ? compare(
          'local.launch-2000.parallel',
          `${title} vs GNU parallel -j2`,
          d,
          side('parallel -j2 /bin/true ::: 1..2000', samples.parallel!, cpu.parallel),
          0.35,
          checks,
          notes,
        )
      : notRun(
          'local.launch-2000.parallel',
          `${title} vs GNU parallel -j2`,
          'skipped',
          'GNU parallel is not installed: apt-get install parallel',
          0.35,
        ),
  );
  results.push(
    compare(
      'local.launch-2000.xargs-logs',
      `${title} vs xargs -P2 writing a stdout and a stderr file per task`,
      d,
      side(`seq | xargs -P2 -I{} sh -c '${WITH_LOGS}'`, samples['xargs-logs']!, cpu['xargs-logs']),
      undefined,
      checks,
      [
        ...notes,
        'no target: a reference that does the file work drover does, to tell it from the runner’s own cost',
      ],
    ),
  );
  return results;
}
