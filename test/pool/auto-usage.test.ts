import assert from 'node:assert/strict';
import { test } from 'node:test';
import { lines, runDrover } from '../helpers/drover.js';
import { poolWorkspace } from './helpers.js';

/**
 * `pool create --auto` refuses bad values and bad combinations in milliseconds, as one line and exit 2 naming the
 * value and what to do, before anything is written: from the CLI, and from the API for clients that skip it.
 * A pool with --auto is not scaled by hand, and `pool resume` is for --auto pools only.
 */

const AUTO = ['pool', 'create', 'p', '--backend', 'slurm', '--auto'];

const REFUSED: [string[], RegExp][] = [
  [['pool', 'create', 'p'], /needs --workers N, or --auto/],
  [['pool', 'create', 'p', '--auto'], /--auto submits workers to a scheduler: add --backend slurm/],
  [[...AUTO, '--workers', '3'], /--workers 3 and --auto together: .*give --max-workers 3 instead/],
  [['pool', 'create', 'p', '--workers', '1', '--max-workers', '2'], /--max-workers is for --auto pools/],
  [['pool', 'create', 'p', '--workers', '1', '--idle-timeout', '5m'], /--idle-timeout is for --auto pools/],
  [[...AUTO, '--min-workers', '5', '--max-workers', '2'], /--min-workers 5 is more than --max-workers 2/],
  [[...AUTO, '--min-workers', '5'], /--min-workers 5 is more than --max-workers 4 \(the default\)/],
  [[...AUTO, '--max-workers', '0'], /--max-workers/],
  [[...AUTO, '--max-workers', '-1'], /--max-workers/],
  [[...AUTO, '--max-workers', '1e9'], /--max-workers/],
  [[...AUTO, '--backlog', '0'], /--backlog/],
  [[...AUTO, '--backlog', '1001'], /--backlog/],
  [[...AUTO, '--idle-timeout', '0s'], /--idle-timeout/],
  [[...AUTO, '--idle-timeout', '5m; rm -rf ~'], /--idle-timeout/],
  [[...AUTO, '--idle-timeout', '8d'], /--idle-timeout/],
  [[...AUTO, '--time-limit', '1h', '--duration', '2h'], /--time-limit and --duration are the same limit/],
  [[...AUTO, '--time-limit', 'forever'], /--time-limit/],
];

test('pool create --auto: bad values and combinations are one line and exit 2, and no pool is made', {
  timeout: 120_000,
}, async (t) => {
  const { cwd } = await poolWorkspace(t);
  for (const [args, says] of REFUSED) {
    const r = await runDrover(args, { cwd });
    const what = `drover ${args.join(' ')}`;
    assert.equal(r.code, 2, `${what} exited ${r.code}: ${r.stderr}`);
    assert.equal(lines(r.stderr).length, 1, `${what}: ${r.stderr}`);
    assert.match(r.stderr, says, what);
  }
  const pools = await runDrover(['pool', 'status', '--json'], { cwd });
  assert.equal(pools.code, 0, pools.stderr);
  assert.deepEqual(JSON.parse(pools.stdout), []);
});

test('the API refuses what the CLI refuses: local --auto, --workers with it, limits out of range or crossed', {
  timeout: 120_000,
}, async (t) => {
  const { cwd, server } = await poolWorkspace(t);
  const post = async (body: object) => {
    const res = await fetch(`${server.url}/v1/pools`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'p', backend: 'slurm', workers: 0, cpus: 1, ...body }),
    });
    return {
      status: res.status,
      message: ((await res.json()) as { error?: { message: string } }).error?.message,
    };
  };
  const bad: [object, RegExp][] = [
    [{ backend: 'local', auto: {} }, /add --backend slurm/],
    [{ workers: 2, auto: {} }, /--workers 2 and --auto together/],
    [{ workers: 0 }, /--workers 0: a pool needs 1 worker or more, or --auto/],
    [{ auto: { max_workers: 0 } }, /max_workers/],
    [{ auto: { min_workers: 3, max_workers: 2 } }, /--min-workers 3 is more than --max-workers 2/],
    [{ auto: { backlog: 0 } }, /backlog/],
    [{ auto: { idle_timeout: 0 } }, /idle_timeout/],
    [{ auto: { idle_timeout: '5m' } }, /idle_timeout/],
    [{ auto: { sbatch: '--wrap=rm -rf ~' } }, /sbatch|additional/],
  ];
  for (const [body, says] of bad) {
    const r = await post(body);
    assert.equal(r.status, 400, `${JSON.stringify(body)}: ${r.status} ${r.message}`);
    assert.match(r.message ?? '', says, JSON.stringify(body));
  }
  const pools = await runDrover(['pool', 'status', '--json'], { cwd });
  assert.deepEqual(JSON.parse(pools.stdout), [], 'nothing was made');
});

test('a pool with --auto is not scaled by hand; resume is for --auto pools only', {
  timeout: 120_000,
}, async (t) => {
  const { cwd } = await poolWorkspace(t);
  // --auto on a Slurm that this machine has not: the pool is made (nothing is submitted while nothing is queued).
  const made = await runDrover([...AUTO, '--max-workers', '3', '--json'], { cwd });
  assert.equal(made.code, 0, made.stderr);
  const p = JSON.parse(made.stdout) as {
    workers_wanted: number;
    auto: { max_workers: number; state: string };
  };
  assert.equal(p.workers_wanted, 0);
  assert.equal(p.auto.max_workers, 3);
  assert.equal(p.auto.state, 'active');
  const scale = await runDrover(['pool', 'scale', 'p', '--workers', '2'], { cwd });
  assert.equal(scale.code, 2, scale.stderr);
  assert.match(scale.stderr, /starts its workers by itself \(--auto\)/);
  const local = await runDrover(['pool', 'create', 'l', '--workers', '1'], { cwd });
  assert.equal(local.code, 0, local.stderr);
  const resume = await runDrover(['pool', 'resume', 'l'], { cwd });
  assert.equal(resume.code, 2, resume.stderr);
  assert.match(resume.stderr, /pool 'l' has no --auto: there is nothing to resume/);
  assert.equal((await runDrover(['pool', 'resume', 'p'], { cwd })).code, 0);
});
