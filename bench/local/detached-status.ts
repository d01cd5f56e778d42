import { compare, type Result, side } from '../result.js';
import { alive, BenchError, drover, fmtMs, progress, removeDir, sleepMs, tempDir } from '../util.js';
import { bigSweep } from './big-job.js';
import { checkAllSucceeded } from './check.js';

/** Issue 14's target for the first status after a detached 100,000-task launch. */
const TARGET_MS = 1000;
const TASKS = 100_000;

/**
 * 3c. The first `drover status J --json` after a real detached launch (`--detach --max-tasks 2`) of 100,000
 * `/bin/true` has ended: the user's wait for an answer once the launch is done. Nothing reads the ledger between
 * the launch and that status; the runner's end is seen from its pid (printed by the launch). `repeat` launches,
 * about a minute each; each gives one sample, as only the first status after a launch is the one measured.
 */
export function benchDetachedStatus(repeat: number): Result[] {
  const n = Math.max(1, repeat);
  const samples: number[] = [];
  const launches: number[] = [];
  for (let i = 0; i < n; i++) {
    const dir = tempDir('detached');
    try {
      drover(bigSweep('big', '/bin/true'), dir);
      const t0 = Date.now();
      const r = drover(['launch', 'big', '--backend', 'local', '--max-tasks', '2', '--detach'], dir);
      const pid = Number(/runner pid (\d+)/.exec(r.stdout + r.stderr)?.[1]);
      if (!Number.isSafeInteger(pid))
        throw new BenchError(`drover launch --detach named no runner pid: ${r.stdout}`);
      progress(`detached-status: launch ${i + 1}/${n}: waiting for runner ${pid} (about a minute)...`);
      while (alive(pid)) sleepMs(50);
      launches.push(Date.now() - t0);
      const s = drover(['status', 'big', '--json'], dir);
      checkAllSucceeded(s.stdout, 'big', TASKS);
      samples.push(s.ms);
      progress(
        `detached-status: the launch took ${fmtMs(launches.at(-1)!)}; the first status ${fmtMs(s.ms)}`,
      );
    } finally {
      removeDir(dir);
    }
  }
  return [
    compare(
      'local.status-100k.detached',
      'first drover status J --json after a detached launch of 100,000 × /bin/true ended',
      side('first drover status --json', samples),
      side('target', [TARGET_MS]),
      1.0,
      [`each status said ${TASKS} tasks, ${TASKS} succeeded`],
      [
        `one sample per launch (only the first status after a launch is this figure); the launches took ${launches.map(fmtMs).join(', ')}`,
      ],
    ),
  ];
}
