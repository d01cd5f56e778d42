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
import { api } from './fake-worker.js';
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
    // Mid-task as the controller knows it: its worker has reported the start (a worker killed between starting a
    // task and reporting it is another case: the controller hands the task on as never started).
    const ps = await waitFor('the task to be running on a worker, its start reported', async () => {
      const s = JSON.parse((await runDrover(['status', 'L', '--json'], { cwd })).stdout);
      if (s.counts.running !== 1 || !fs.existsSync(path.join(cwd, 'pid.1'))) return undefined;
      const r = await runDrover(['pool', 'status', 'p', '--json'], { cwd });
      const ws = (JSON.parse(r.stdout) as { workers: { pid: number; tasks: string[] }[] }).workers;
      return ws.find((w) => w.tasks.length > 0);
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

test('the API refuses bad --requeue values, and a requeue without a task limit, with a 400 naming them', async (t) => {
  const { cwd, server } = await poolWorkspace(t);
  await createPool(cwd, 'p', ['--workers', '1', '--cpus', '1']);
  const launch = (extra: object) =>
    api(server.url, 'POST', '/launches', server.token, {
      pool: 'p',
      cwd,
      command: 'true',
      task_timeout: 60,
      ...extra,
    });
  for (const requeue of [-1, 1001, 1.5, '2', null, true, 1e12])
    for (const [field, value] of [
      ['requeue', requeue],
      ['requeue_exit', requeue],
    ] as const) {
      const r = await launch({ requeue: 1, [field]: value });
      assert.equal(r.status, 400, `${field} ${JSON.stringify(value)}: ${JSON.stringify(r.body)}`);
      assert.match(r.body.error!.message, new RegExp(`'${field}'`));
    }
  for (const code of [0, 126, 255]) {
    const r = await launch({ requeue: 1, requeue_exit: code });
    assert.equal(r.status, 400, `requeue_exit ${code}: ${JSON.stringify(r.body)}`);
  }
  const unlimited = await api(server.url, 'POST', '/launches', server.token, {
    pool: 'p',
    cwd,
    command: 'true',
    requeue: 2,
  });
  assert.equal(unlimited.status, 400, JSON.stringify(unlimited.body));
  assert.match(unlimited.body.error!.message, /--requeue 2 needs a time limit to requeue at/);
  const alone = await launch({ requeue_exit: 9 });
  assert.equal(alone.status, 400, JSON.stringify(alone.body));
  assert.match(alone.body.error!.message, /--requeue-exit 9 does nothing without --requeue N/);
  // Nothing was launched by any of them.
  const s = await runDrover(['status', '--json'], { cwd });
  assert.deepEqual(JSON.parse(s.stdout), []);
});
