/**
 * `launch --requeue N` (issue 34): bad values and launches it cannot serve are refused (exit 2, one line naming the
 * value, nothing written); a task that asks again and again stops after N with a reason that says so; a requeue
 * is no retry (no backoff, counted apart, DROVER_RESUME=1). The scenario on every backend is
 * test/conformance/scenarios/requeue.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runDrover } from '../helpers/drover.js';
import { snapshot, tempWorkspace, writeScript } from '../helpers/workspace.js';

interface Attempt {
  task: number;
  attempt: number;
  state: string;
  exit_code: number | null;
  reason: string | null;
}

async function attemptsOf(
  cwd: string,
  job: string,
): Promise<[number, string, number | null, string | null][]> {
  const r = await runDrover(['list', job, '--attempts', '--json'], { cwd });
  assert.equal(r.code, 0, r.stderr);
  return (JSON.parse(r.stdout) as Attempt[]).map((a) => [a.attempt, a.state, a.exit_code, a.reason]);
}

test('--requeue refuses bad values, no per-task limit (pools too), and --requeue-exit alone: exit 2, nothing written', async (t) => {
  const cwd = tempWorkspace(t);
  assert.equal((await runDrover(['prelaunch', '+command', 'true', '+jobname', 'q', '+q'], { cwd })).code, 0);
  const before = snapshot(cwd);
  for (const [args, what] of [
    [['--requeue', '-1', '--task-timeout', '1m'], /--requeue '-1' is not a whole number/],
    [['--requeue', 'two', '--task-timeout', '1m'], /--requeue 'two' is not a whole number/],
    [['--requeue', '1001', '--task-timeout', '1m'], /--requeue '1001' is out of range/],
    [
      ['--requeue', '2'],
      /--requeue 2 needs a time limit to requeue at: add --task-timeout TIME or --duration TIME/,
    ],
    [
      ['--backend', 'slurm', '--requeue', '1'],
      /--requeue 1 needs a time limit to requeue at: add --task-timeout TIME or --duration TIME/,
    ],
    [
      ['--backend', 'slurm', '--requeue', '1', '--duration', '20s'],
      /--requeue 1 with --duration 20s: each run of an element stops its tasks 15 s before its limit \(--kill-grace \+ 10 s\), so give --duration 30s or more, or a --task-timeout/,
    ],
    [
      ['--pool', 'p', '--requeue', '1'],
      /--requeue 1 needs a time limit to requeue at: add --task-timeout TIME$/m,
    ],
    [['--requeue-exit', '75', '--task-timeout', '1m'], /--requeue-exit 75 does nothing without --requeue N/],
    [['--requeue', '1', '--requeue-exit', '0', '--task-timeout', '1m'], /--requeue-exit '0' is out of range/],
    [
      ['--requeue', '1', '--requeue-exit', '130', '--task-timeout', '1m'],
      /--requeue-exit '130' is out of range/,
    ],
    [
      ['--requeue', '1', '--requeue-exit', '7.5', '--task-timeout', '1m'],
      /--requeue-exit '7.5' is not a whole number/,
    ],
  ] as const) {
    const r = await runDrover(['launch', 'q', ...args], { cwd });
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, what);
    assert.equal(r.stderr.trimEnd().split('\n').length, 1, r.stderr);
    assert.deepEqual(snapshot(cwd), before);
  }
  const help = await runDrover(['launch', '--help'], { cwd });
  assert.match(help.stdout, /--requeue <n>/);
  assert.match(help.stdout, /--requeue-exit <code>/);
});

test('a task that asks to be requeued every time stops after N, and says why; requeues are not retries', async (t) => {
  const cwd = tempWorkspace(t);
  const r = await runDrover(
    [
      'launch',
      '--command',
      'exit 75',
      '--jobname',
      'loop',
      '--requeue',
      '2',
      '--task-timeout',
      '1m',
      '-q',
      '--json',
    ],
    { cwd },
  );
  assert.equal(r.code, 1, r.stderr);
  assert.deepEqual(await attemptsOf(cwd, 'loop'), [
    [1, 'failed', 75, 'checkpointed'],
    [2, 'failed', 75, 'checkpointed'],
    [3, 'failed', 75, 'checkpointed, no requeue left (--requeue 2)'],
  ]);
  const s = JSON.parse((await runDrover(['status', 'loop', '--json'], { cwd })).stdout);
  assert.equal(s.requeues, 2);
  assert.equal(s.launches[0].requeues, 2);
  assert.deepEqual([s.counts.failed, s.done], [1, 1]);
  const human = await runDrover(['status', 'loop'], { cwd });
  assert.match(human.stdout, /job loop: 1 tasks, 0 succeeded \(0%\), 2 requeues/);

  // Its own code, and a retry after the requeues: each attempt says what it was told.
  writeScript(cwd, 'ask.sh', `echo "attempt=$DROVER_ATTEMPT resume=\${DROVER_RESUME-none}"; exit 9\n`);
  const own = await runDrover(
    [
      ...['launch', '--command', 'sh ask.sh', '--jobname', 'own', '--requeue', '1', '--requeue-exit', '9'],
      ...['--retries', '1', '--retry-delay', '0', '--task-timeout', '1m', '-q'],
    ],
    { cwd },
  );
  assert.equal(own.code, 1, own.stderr);
  assert.deepEqual(await attemptsOf(cwd, 'own'), [
    [1, 'failed', 9, 'checkpointed'],
    [2, 'failed', 9, 'checkpointed, no requeue left (--requeue 1)'],
    [3, 'failed', 9, 'checkpointed, no requeue left (--requeue 1)'],
  ]);
  const logs = await runDrover(['logs', 'own', '1', '--all-attempts'], { cwd });
  assert.match(logs.stdout, /attempt=1 resume=none\n[\s\S]*attempt=2 resume=1\n[\s\S]*attempt=3 resume=1\n/);
  const list = JSON.parse((await runDrover(['list', 'own', '--json'], { cwd })).stdout);
  assert.deepEqual([list[0].attempts, list[0].requeues], [3, 1]);

  // Exit 75 without --requeue is a failure like any other.
  const plain = await runDrover(['launch', '--command', 'exit 75', '--jobname', 'plain', '-q'], { cwd });
  assert.equal(plain.code, 1);
  assert.deepEqual(await attemptsOf(cwd, 'plain'), [[1, 'failed', 75, null]]);
});
