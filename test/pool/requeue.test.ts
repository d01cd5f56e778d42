/**
 * `--requeue` on a pool (issue 34): the controller decides requeues for its workers. A worker killed mid-task
 * is a requeue while the task has some left — the attempt stays `lost`, marked requeued, and the next one
 * resumes (DROVER_RESUME=1) on another worker — and, without --requeue, the lost attempt stands. The checkpoint
 * and time-limit requeues on a pool are the conformance scenario (test/conformance/scenarios/requeue.ts).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { runDrover } from '../helpers/drover.js';
import { waitFor } from '../helpers/workspace.js';
import { createPool, poolWorkspace } from './helpers.js';

/** Writes its pid and resume flag; its first attempt then works 30 s, which its worker's death cuts short. */
const LONG = `echo "$$" > "pid.$DROVER_ATTEMPT"
echo "attempt $DROVER_ATTEMPT resume=\${DROVER_RESUME-none} on $DROVER_WORKER"
if [ "$DROVER_ATTEMPT" = 1 ]; then sleep 30; fi
`;

interface Row {
  task: number;
  attempt: number;
  state: string;
  reason: string | null;
}

async function attemptsOf(cwd: string, job: string): Promise<[number, string][]> {
  const r = await runDrover(['list', job, '--attempts', '--json'], { cwd });
  assert.equal(r.code, 0, r.stderr);
  return (JSON.parse(r.stdout) as Row[]).map((a) => [a.attempt, a.state]);
}

for (const requeue of [1, 0]) {
  test(`a pool worker killed mid-task: ${requeue ? 'with --requeue 1 the task is requeued, resumes elsewhere and succeeds' : 'without --requeue its attempt stays lost'}`, async (t) => {
    const { cwd } = await poolWorkspace(t);
    fs.writeFileSync(path.join(cwd, 'long.sh'), LONG);
    await createPool(cwd, 'p', ['--workers', '2', '--cpus', '1']);
    const l = await runDrover(
      [
        ...['launch', '--pool', 'p', '--command', 'sh long.sh', '--jobname', 'L', '--task-timeout', '1m'],
        ...(requeue ? ['--requeue', '1'] : []),
      ],
      { cwd },
    );
    assert.equal(l.code, 0, l.stderr);
    const ps = await waitFor('the task to be running on a worker', async () => {
      const r = await runDrover(['pool', 'status', 'p', '--json'], { cwd });
      const ws = (JSON.parse(r.stdout) as { workers: { pid: number; tasks: string[] }[] }).workers;
      return fs.existsSync(path.join(cwd, 'pid.1')) && ws.find((w) => w.tasks.length > 0);
    });
    process.kill(ps.pid, 'SIGKILL');
    const s = await waitFor(
      'the task to end',
      async () => {
        const r = JSON.parse((await runDrover(['status', 'L', '--json'], { cwd })).stdout);
        return r.counts.queued + r.counts.running === 0 ? r : undefined;
      },
      90_000,
    );
    if (requeue) {
      assert.equal(s.counts.succeeded, 1);
      assert.equal(s.requeues, 1);
      assert.deepEqual(await attemptsOf(cwd, 'L'), [
        [1, 'lost'],
        [2, 'succeeded'],
      ]);
      const out = await runDrover(['logs', 'L', '1'], { cwd });
      assert.match(out.stdout, /^attempt 2 resume=1 on /);
    } else {
      assert.equal(s.counts.lost, 1);
      assert.equal(s.requeues, 0);
      assert.deepEqual(await attemptsOf(cwd, 'L'), [[1, 'lost']]);
    }
  });
}
