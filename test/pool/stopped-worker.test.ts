import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { runDrover } from '../helpers/drover.js';
import { pidIn, waitFor } from '../helpers/workspace.js';
import { attempts, createPool, groupAlive, liveWorkers, poolWorkspace } from './helpers.js';

interface Listed {
  id: string;
  pid: number;
  state: string;
  tasks: string[];
}

async function poolWorkers(cwd: string): Promise<Listed[]> {
  const r = await runDrover(['pool', 'status', 'p', '--json'], { cwd });
  assert.equal(r.code, 0, r.stderr);
  return (JSON.parse(r.stdout) as { workers: Listed[] }).workers;
}

/** The log file of the local worker registered as `id`, and its lines. */
function workerLog(cwd: string, id: string): string[] {
  const dir = path.join(cwd, '.drover', 'pools', 'p', 'workers');
  for (const f of fs.readdirSync(dir).filter((x) => x.endsWith('.log'))) {
    const text = fs.readFileSync(path.join(dir, f), 'utf8');
    if (text.includes(` as ${id} `)) return text.trim().split('\n');
  }
  throw new Error(`no log of worker ${id}`);
}

/** The process group an attempt ran in, from `pgids/TASK.ATTEMPT` (written by the task itself), once written. */
function pgidOf(cwd: string, task: number, attempt: number): number | undefined {
  return pidIn(path.join(cwd, 'pgids', `${task}.${attempt}`));
}

test('a worker stopped past --lost-after and continued: its lost task is killed, it takes work again, then drains', async (t) => {
  const { cwd } = await poolWorkspace(t);
  fs.mkdirSync(path.join(cwd, 'runs'));
  fs.mkdirSync(path.join(cwd, 'pgids'));
  // First attempts run for $1 seconds, retries for half a second; each marks its run once it ran to its end.
  fs.writeFileSync(
    path.join(cwd, 'run.sh'),
    [
      'ps -o pgid= -p $$ | tr -d " " > "pgids/$DROVER_TASK_ID.$DROVER_ATTEMPT"',
      'if [ "$DROVER_ATTEMPT" = 1 ]; then sleep "$1"; else sleep 0.5; fi',
      'echo "$DROVER_ATTEMPT $DROVER_WORKER" >> "runs/$DROVER_TASK_ID"',
      '',
    ].join('\n'),
  );
  const pre = await runDrover(
    ['prelaunch', '+command', 'sh run.sh', '+jobname', 'J', '+pos-arg', '60', '14', '+q'],
    {
      cwd,
    },
  );
  assert.equal(pre.code, 0, pre.stderr);
  await createPool(cwd, 'p', ['--workers', '2', '--cpus', '1']);
  const r = await runDrover(
    ['launch', '--pool', 'p', '--jobname', 'J', '--retries', '1', '--retry-delay', '0', '--kill-grace', '1'],
    { cwd },
  );
  assert.equal(r.code, 0, r.stderr);
  const lostGroup = await waitFor('both tasks to start', () => pgidOf(cwd, 2, 1) && pgidOf(cwd, 1, 1));
  const victim = (await poolWorkers(cwd)).find((w) => w.tasks.includes('1:1'))!;

  process.kill(victim.pid, 'SIGSTOP');
  t.after(() => {
    try {
      process.kill(victim.pid, 'SIGCONT');
    } catch {
      // gone
    }
  });
  await waitFor(
    'task 1 to be recorded lost',
    () => attempts(cwd, 'J').some((a) => a.task_id === 1 && a.attempt === 1 && a.state === 'lost'),
    15_000,
  );
  process.kill(victim.pid, 'SIGCONT');

  // Awake, it learns the attempt is no longer its own: it stops the task's processes and records nothing of it.
  await waitFor(
    () =>
      `the lost attempt’s processes to be gone; the worker's log:\n${workerLog(cwd, victim.id).join('\n')}`,
    () => !groupAlive(lostGroup),
    10_000,
  );
  // Its retry goes to the only free worker, the one that woke, and runs to its end: nothing cancels it.
  await waitFor(
    'task 1 to succeed',
    () => attempts(cwd, 'J').some((a) => a.task_id === 1 && a.state === 'succeeded'),
    20_000,
  );
  const back = (await poolWorkers(cwd)).find((w) => w.id === victim.id);
  assert.equal(back?.state, 'ready', 'the worker is a live worker again, under its own id');

  // A launch made after it woke runs tasks on it.
  const k = await runDrover(
    [
      'launch',
      '--pool',
      'p',
      '--num-jobs',
      '4',
      '--jobname',
      'K',
      '--command',
      'sleep 1; echo "$DROVER_WORKER"',
    ],
    { cwd },
  );
  assert.equal(k.code, 0, k.stderr);
  await waitFor(
    'launch K to end',
    () => attempts(cwd, 'K').filter((a) => a.state === 'succeeded').length === 4,
    30_000,
  );
  const ranOn = await Promise.all(
    [1, 2, 3, 4].map(async (task) => (await runDrover(['logs', 'K', String(task)], { cwd })).stdout.trim()),
  );
  assert.ok(
    ranOn.includes(victim.id),
    `a task of K ran on the worker that woke (ran on ${ranOn.join(', ')})`,
  );

  await waitFor(
    'launch J to end',
    () => attempts(cwd, 'J').filter((a) => a.state === 'succeeded').length === 2,
    30_000,
  );
  assert.deepEqual(
    attempts(cwd, 'J').map((a) => [a.task_id, a.attempt, a.state]),
    [
      [1, 1, 'lost'],
      [1, 2, 'succeeded'],
      [2, 1, 'succeeded'],
    ],
    'the lost attempt stays lost: nothing the woken worker ran afterwards is recorded for it',
  );
  // The lost attempt never ran to its end: it was stopped, not left to finish beside its retry.
  assert.deepEqual(
    fs
      .readFileSync(path.join(cwd, 'runs', '1'), 'utf8')
      .trim()
      .split('\n').length,
    1,
  );
  assert.match(fs.readFileSync(path.join(cwd, 'runs', '1'), 'utf8'), /^2 /);

  // Nothing loops: what the controller refused is dropped once, not resent.
  const log = workerLog(cwd, victim.id);
  assert.ok(
    log.filter((l) => l.includes('refused')).length <= 1,
    `refusals are dropped, not resent:\n${log.join('\n')}`,
  );
  assert.ok(log.length <= 12, `${log.length} log lines:\n${log.join('\n')}`);

  // Scaled to 0, both workers drain and exit; no task process is left.
  const scale = await runDrover(['pool', 'scale', 'p', '--workers', '0'], { cwd });
  assert.equal(scale.code, 0, scale.stderr);
  await waitFor('the workers to exit', () => liveWorkers(cwd).length === 0, 20_000);
  assert.deepEqual(await poolWorkers(cwd), []);
  for (const f of fs.readdirSync(path.join(cwd, 'pgids'))) {
    const [task, attempt] = f.split('.').map(Number);
    const pgid = pgidOf(cwd, task!, attempt!);
    assert.ok(pgid !== undefined && !groupAlive(pgid), `a process of task ${f} is left (group ${pgid})`);
  }
});

test('a draining worker stopped past --lost-after: awake, it stops its lost task and leaves at once', async (t) => {
  const { cwd } = await poolWorkspace(t);
  fs.mkdirSync(path.join(cwd, 'pgids'));
  // Stopped, the task takes its time to go (its shell runs the trap once sleep is gone): until SIGKILL.
  fs.writeFileSync(
    path.join(cwd, 'slow.sh'),
    'ps -o pgid= -p $$ | tr -d " " > "pgids/$DROVER_TASK_ID.$DROVER_ATTEMPT"\ntrap "sleep 30" TERM\nsleep 60\n',
  );
  await createPool(cwd, 'p', ['--workers', '1', '--cpus', '1']);
  const r = await runDrover(
    ['launch', '--pool', 'p', '--jobname', 'D', '--command', 'sh slow.sh', '--kill-grace', '2'],
    { cwd },
  );
  assert.equal(r.code, 0, r.stderr);
  const group = await waitFor('the task to start', () => pgidOf(cwd, 1, 1));
  const [worker] = await poolWorkers(cwd);
  const scale = await runDrover(['pool', 'scale', 'p', '--workers', '0'], { cwd });
  assert.equal(scale.code, 0, scale.stderr);
  await waitFor('the worker to drain', async () => (await poolWorkers(cwd))[0]?.state === 'draining');

  process.kill(worker!.pid, 'SIGSTOP');
  t.after(() => {
    try {
      process.kill(worker!.pid, 'SIGCONT');
    } catch {
      // gone
    }
  });
  await waitFor(
    'the task to be recorded lost',
    () => attempts(cwd, 'D').some((a) => a.state === 'lost'),
    15_000,
  );
  process.kill(worker!.pid, 'SIGCONT');
  // It does not wait out its tasks for a minute: they are no longer its own. It stops them and leaves; its
  // process ends once its tasks' processes are gone (the task takes its --kill-grace to go).
  await waitFor('the worker to exit', () => liveWorkers(cwd).length === 0, 10_000);
  assert.equal(groupAlive(group), false, 'the lost attempt’s processes are gone before the worker');
  assert.deepEqual(
    attempts(cwd, 'D').map((a) => [a.task_id, a.attempt, a.state]),
    [[1, 1, 'lost']],
  );
  const log = workerLog(cwd, worker!.id);
  assert.ok(log.length <= 6, `${log.length} log lines:\n${log.join('\n')}`);
});
