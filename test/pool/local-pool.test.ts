import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { counts, list, status, statusWhen } from '../helpers/contract.js';
import { runDrover } from '../helpers/drover.js';
import { createPool, poolWorkspace } from './helpers.js';

test('a local pool of 4 workers runs a 2000-task sweep to completion, each task once', async (t) => {
  const { cwd } = await poolWorkspace(t);
  fs.mkdirSync(path.join(cwd, 'runs'));
  const values = Array.from({ length: 2000 }, (_, i) => String(i + 1));
  const pre = await runDrover(
    ['prelaunch', '+command', 'sh mark.sh', '+jobname', 'S', '+pos-arg', ...values, '+q'],
    {
      cwd,
    },
  );
  assert.equal(pre.code, 0, pre.stderr);
  fs.writeFileSync(
    path.join(cwd, 'mark.sh'),
    'echo "$1 $DROVER_WORKER" >> "runs/$DROVER_TASK_ID"; echo "out $1"; echo "err $1" >&2\n',
  );
  await createPool(cwd, 'p', ['--workers', '4', '--cpus', '1']);

  const r = await runDrover(['launch', '--pool', 'p', '--jobname', 'S', '--follow', '--json'], { cwd });
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout) as { launch: string; tasks: number; backend: string };
  assert.equal(out.tasks, 2000);
  assert.equal(out.backend, 'pool:p');

  const s = await status('S', { cwd });
  assert.deepEqual(s.counts, counts({ succeeded: 2000 }));
  assert.equal(s.launches.length, 1);
  assert.equal(s.launches[0]!.backend, 'pool:p');
  assert.equal(s.launches[0]!.tasklist, '1-2000');
  assert.deepEqual(s.launches[0]!.counts, counts({ succeeded: 2000 }));
  const tasks = await list('S', { cwd });
  assert.equal(tasks.length, 2000);
  assert.ok(tasks.every((x) => x.state === 'succeeded' && x.exit_code === 0 && x.attempts === 1));
  // Every task ran exactly once, and the work was spread over the 4 workers.
  const runs = fs.readdirSync(path.join(cwd, 'runs'));
  assert.equal(runs.length, 2000);
  const workers = new Set<string>();
  for (const f of runs) {
    const lines = fs
      .readFileSync(path.join(cwd, 'runs', f), 'utf8')
      .trim()
      .split('\n');
    assert.equal(lines.length, 1, `task ${f} ran ${lines.length} times`);
    workers.add(lines[0]!.split(' ')[1]!);
  }
  assert.equal(workers.size, 4);
  // Logs are where drover logs finds them: each worker's slot segments (one slot each), every task its own slice.
  const logs = await runDrover(['logs', 'S', '7', '--path'], { cwd });
  assert.equal(logs.code, 0, logs.stderr);
  assert.match(logs.stdout, /\.drover\/logs\/S\/1\/[\w.-]+\.0\.out\n$/);
  const files = fs.readdirSync(path.join(cwd, '.drover', 'logs', 'S', '1'));
  assert.ok(files.length <= 4 * 3, `${files.length} log files for 2000 tasks on 4 one-slot workers`);
  for (const task of ['1', '7', '1000', '2000']) {
    assert.equal((await runDrover(['logs', 'S', task], { cwd })).stdout, `out ${task}\n`);
    assert.equal((await runDrover(['logs', 'S', task, '--err'], { cwd })).stdout, `err ${task}\n`);
  }
});

test('--num-jobs N runs the command N times with DROVER_JOB_RANK 0..N-1 and DROVER_NUM_JOBS', async (t) => {
  const { cwd } = await poolWorkspace(t);
  await createPool(cwd, 'p', ['--workers', '2', '--cpus', '2']);
  const r = await runDrover(
    [
      'launch',
      '--pool',
      'p',
      '--num-jobs',
      '7',
      '--command',
      'echo "$DROVER_JOB_RANK/$DROVER_NUM_JOBS task $DROVER_TASK_ID"',
      '--jobname',
      'R',
      '--follow',
      '--json',
    ],
    { cwd },
  );
  assert.equal(r.code, 0, r.stderr);
  assert.equal((JSON.parse(r.stdout) as { tasks: number }).tasks, 7);
  const s = await status('R', { cwd });
  assert.deepEqual(s.counts, counts({ succeeded: 7 }));
  for (let task = 1; task <= 7; task++) {
    const log = await runDrover(['logs', 'R', String(task)], { cwd });
    assert.equal(log.code, 0, log.stderr);
    assert.equal(log.stdout, `${task - 1}/7 task ${task}\n`);
  }
  // Retries with backoff, by the controller: each task fails its first attempt and succeeds its second.
  const rt = await runDrover(
    [
      'launch',
      '--pool',
      'p',
      '--num-jobs',
      '3',
      '--command',
      'test "$DROVER_ATTEMPT" -ge 2',
      '--retries',
      '2',
      '--retry-delay',
      '0.2',
      '--jobname',
      'RT',
      '--follow',
      '-q',
    ],
    { cwd },
  );
  assert.equal(rt.code, 0, rt.stderr);
  assert.deepEqual(
    (await list('RT', { cwd })).map((x) => [x.task, x.state, x.attempts]),
    [
      [1, 'succeeded', 2],
      [2, 'succeeded', 2],
      [3, 'succeeded', 2],
    ],
  );
});

test('a launch onto a pool that does not exist fails at once with a clear error', async (t) => {
  const { cwd } = await poolWorkspace(t);
  const r = await runDrover(['launch', '--pool', 'nope', '--num-jobs', '3', '--command', 'true'], { cwd });
  assert.equal(r.code, 2);
  assert.match(r.stderr, /pool 'nope' does not exist: create it with drover pool create nope/);
});

test('cancel, pool status and pool down work on a pool launch', async (t) => {
  const { cwd } = await poolWorkspace(t);
  await createPool(cwd, 'p', ['--workers', '2', '--cpus', '1']);
  const pre = await runDrover(
    ['prelaunch', '+command', 'sleep', '+jobname', 'L', '+pos-arg', '30', '30', '30', '30', '30', '+q'],
    {
      cwd,
    },
  );
  assert.equal(pre.code, 0, pre.stderr);
  const r = await runDrover(['launch', '--pool', 'p', '--jobname', 'L', '--kill-grace', '1'], { cwd });
  assert.equal(r.code, 0, r.stderr);
  const { waitFor } = await import('../helpers/workspace.js');
  await statusWhen('L', { cwd }, '2 tasks running', (s) => s.counts.running === 2);
  const ps = await runDrover(['pool', 'status', 'p', '--json'], { cwd });
  const pool = JSON.parse(ps.stdout) as {
    workers: { free_slots: number; tasks: string[] }[];
    queued: number;
  };
  assert.deepEqual(
    pool.workers.map((w) => w.free_slots),
    [0, 0],
  );
  assert.equal(pool.queued, 3);
  const down = await runDrover(['pool', 'down', 'p'], { cwd });
  assert.equal(down.code, 2);
  assert.match(down.stderr, /not done: wait, cancel them, or add --force/);

  // A task queued or running in a launch is not launched again.
  const again = await runDrover(['launch', '--pool', 'p', '--jobname', 'L', '--tasklist', '2-3'], { cwd });
  assert.equal(again.code, 2);
  assert.match(again.stderr, /task 2-3 of 'L' is already queued or running/);

  const c = await runDrover(['cancel', 'L', '--yes', '--json'], { cwd });
  assert.equal(c.code, 0, c.stderr);
  const s = await status('L', { cwd });
  assert.deepEqual(s.counts, counts({ cancelled: 5 }));
  // Scale up, then down: the extra workers drain and leave.
  const poolStates = async () =>
    (
      JSON.parse((await runDrover(['pool', 'status', 'p', '--json', '--all'], { cwd })).stdout) as {
        workers: { state: string }[];
      }
    ).workers.map((w) => w.state);
  assert.equal((await runDrover(['pool', 'scale', 'p', '--workers', '3'], { cwd })).code, 0);
  await waitFor(
    '3 workers ready',
    async () => (await poolStates()).filter((x) => x === 'ready').length === 3,
  );
  assert.equal((await runDrover(['pool', 'scale', 'p', '--workers', '1'], { cwd })).code, 0);
  await waitFor('2 workers stopped, 1 ready', async () => {
    const st = await poolStates();
    return st.filter((x) => x === 'ready').length === 1 && st.filter((x) => x === 'stopped').length === 2;
  });
  const down2 = await runDrover(['pool', 'down', 'p'], { cwd });
  assert.equal(down2.code, 0, down2.stderr);
});

test('a pool made again under the same name right after pool down keeps its workers', {
  timeout: 90_000,
}, async (t) => {
  const { cwd } = await poolWorkspace(t);
  await createPool(cwd, 'p', ['--workers', '1', '--cpus', '1']);
  const down = await runDrover(['pool', 'down', 'p', '--force'], { cwd });
  assert.equal(down.code, 0, down.stderr);
  // Within the old pool's 5 s grace period: the old worker token is revoked when it ends, not the new one.
  await createPool(cwd, 'p', ['--workers', '1', '--cpus', '1']);
  await new Promise((r) => setTimeout(r, 6000));
  const pre = await runDrover(
    ['prelaunch', '+command', 'echo', '+jobname', 'A', '+pos-arg', 'x', 'y', '+q'],
    {
      cwd,
    },
  );
  assert.equal(pre.code, 0, pre.stderr);
  const r = await runDrover(['launch', '--pool', 'p', '--jobname', 'A', '--follow', '-q'], { cwd });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual((await status('A', { cwd })).counts, counts({ succeeded: 2 }));
});
