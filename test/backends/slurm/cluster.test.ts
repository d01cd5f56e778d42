import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { condenseIds } from '../../../src/tasklist/tasklist.js';
import { counts, list, status, statusWhen } from '../../helpers/contract.js';
import { droverJson, lines, repoRoot, runDrover, startDrover } from '../../helpers/drover.js';
import { waitFor, writeScript } from '../../helpers/workspace.js';
import {
  arrayIds,
  jobField,
  maxArraySize,
  queued,
  SLURM_SKIP,
  settled,
  slurmUp,
  slurmWorkspace,
} from './cluster-helpers.js';

/**
 * drover launch --backend slurm, status, list, cancel and --failed on the real single-node Slurm of
 * scripts/test-cluster/slurm-up.sh. The tests of the first suite run at once (the sweep waits ~80 s for a
 * time limit); the MaxArraySize suite restarts the cluster, so it runs alone, last.
 */

interface Launched {
  launch: string;
  tasklist: string;
  handles: { arrays: { id: string; offset: number; array: string }[]; tasks_per_node: number };
  warnings: string[];
}

async function prelaunch(cwd: string, job: string, command: string, values: readonly (string | number)[]) {
  const r = await runDrover(
    ['prelaunch', '+command', command, '+jobname', job, '+pos-arg', ...values.map(String), '+q'],
    {
      cwd,
    },
  );
  assert.equal(r.code, 0, r.stderr);
}

function launch(cwd: string, job: string, ...args: string[]): Promise<Launched> {
  return droverJson<Launched>(['launch', '--backend', 'slurm', '--jobname', job, '--json', ...args], { cwd });
}

const range = (n: number, from = 1) => Array.from({ length: n }, (_, i) => from + i);
const logOf = (cwd: string, job: string, launchId: string, task: number, attempt = 1) =>
  fs.readFileSync(path.join(cwd, '.drover', 'logs', job, launchId, `${task}.${attempt}.out`), 'utf8');

describe('drover on a real Slurm', { skip: SLURM_SKIP, concurrency: true }, () => {
  test('the Slurm test cluster is up (DROVER_TEST_SLURM=1 makes this a failure when it is not)', () => {
    assert.ok(slurmUp(), 'Slurm does not answer: run scripts/test-cluster/slurm-up.sh');
  });

  test('a 200-task sweep: exact counts with exit codes and one timeout, then --failed reruns exactly those', {
    timeout: 240_000,
  }, async (t) => {
    const cwd = slurmWorkspace(t);
    // First attempts: 7 and 77 exit 3, 42 exits 42, 177 exits 1, 100 outlives the 1-minute limit.
    writeScript(
      cwd,
      'sweep.sh',
      'if [ "$DROVER_ATTEMPT" = 1 ]; then\n  case $1 in 7|77) exit 3;; 42) exit 42;; 177) exit 1;; 100) exec sleep 300;; esac\nfi\necho "task $1"\n',
    );
    await prelaunch(cwd, 'S', 'sh sweep.sh', range(200));
    const first = await launch(cwd, 'S', '--duration', '1m');
    assert.deepEqual(
      first.handles.arrays.map((a) => [a.offset, a.array]),
      [[0, '1-200']],
    );
    assert.equal(jobField(first.handles.arrays[0]!.id, 'TimeLimit'), '00:01:00');

    const s1 = await settled('S', cwd, 180_000);
    assert.deepEqual(s1.counts, counts({ succeeded: 195, failed: 4, timeout: 1 }));
    assert.deepEqual(s1.launches[0]!.counts, s1.counts);
    const tasks = await list('S', { cwd });
    const notOk = tasks.filter((x) => x.state !== 'succeeded').map((x) => [x.task, x.state, x.exit_code]);
    assert.deepEqual(notOk, [
      [7, 'failed', 3],
      [42, 'failed', 42],
      [77, 'failed', 3],
      [100, 'timeout', null],
      [177, 'failed', 1],
    ]);
    assert.ok(
      tasks.filter((x) => x.state === 'succeeded').every((x) => x.exit_code === 0 && x.attempts === 1),
    );
    assert.equal(logOf(cwd, 'S', first.launch, 150), 'task 150\n');

    const rerun = await launch(cwd, 'S', '--failed');
    // The condensed tasklist, as one array: 7-77:35 is 7, 42 and 77.
    assert.equal(rerun.tasklist, condenseIds([7, 42, 77, 100, 177]));
    assert.deepEqual(
      rerun.handles.arrays.map((a) => a.array),
      ['7-77:35,100,177'],
    );
    const s2 = await settled('S', cwd, 60_000);
    assert.deepEqual(s2.counts, counts({ succeeded: 200 }));
    assert.deepEqual(s2.launches[1]!.counts, counts({ succeeded: 5 }));
    const again = (await list('S', { cwd })).filter((x) => x.attempts === 2).map((x) => x.task);
    assert.deepEqual(again, [7, 42, 77, 100, 177]);
    assert.equal(logOf(cwd, 'S', rerun.launch, 100, 2), 'task 100\n');
  });

  test('a tasklist 1-3,5-9,13 runs exactly those tasks, with the configured header in each element', async (t) => {
    const cwd = slurmWorkspace(t);
    writeScript(cwd, 'show.sh', 'echo "$1 $FROM_HEADER"\n');
    await prelaunch(cwd, 'T', 'sh show.sh', range(15));
    fs.writeFileSync(
      path.join(cwd, '.drover', 'config.json'),
      JSON.stringify({ slurm: { header: 'export FROM_HEADER=set-by-header' } }),
    );
    const l = await launch(cwd, 'T', '--tasklist', '1-3,5-9,13');
    assert.equal(l.tasklist, '1-3,5-9,13');
    assert.equal(l.handles.arrays[0]!.array, '1-3,5-9,13');
    const s = await settled('T', cwd, 60_000);
    assert.deepEqual(s.counts, counts({ succeeded: 9, pending: 6 }));
    const ran = (await list('T', { cwd })).filter((x) => x.state === 'succeeded').map((x) => x.task);
    assert.deepEqual(ran, [1, 2, 3, 5, 6, 7, 8, 9, 13]);
    for (const id of ran) assert.equal(logOf(cwd, 'T', l.launch, id), `${id} set-by-header\n`);
  });

  test('cancelling pending and running tasks records cancelled for each, and only for them', {
    timeout: 120_000,
  }, async (t) => {
    const cwd = slurmWorkspace(t);
    await prelaunch(cwd, 'C', 'sleep', Array(6).fill(300));
    const l = await launch(cwd, 'C', '--max-tasks', '2');
    assert.match(l.handles.arrays[0]!.array, /^1-6$/);
    await waitFor(
      'tasks 1 and 2 running',
      async () => {
        const s = await status('C', { cwd });
        return s.counts.running === 2 && s.counts.queued === 4;
      },
      60_000,
      500,
    );
    // 2 runs; 4 and 5 pend (the %2 throttle holds them).
    const some = await runDrover(['cancel', 'C', '--tasklist', '2,4,5', '--yes'], { cwd });
    assert.equal(some.code, 0, some.stderr);
    await waitFor(
      'task 3 to take the freed slot',
      async () => (await list('C', { cwd }))[2]!.state === 'running',
      60_000,
      500,
    );
    assert.deepEqual(
      (await list('C', { cwd })).map((x) => [x.task, x.state]),
      [
        [1, 'running'],
        [2, 'cancelled'],
        [3, 'running'],
        [4, 'cancelled'],
        [5, 'cancelled'],
        [6, 'queued'],
      ],
    );
    const rest = await runDrover(['cancel', 'C', '--yes'], { cwd });
    assert.equal(rest.code, 0, rest.stderr);
    const s = await settled('C', cwd, 60_000);
    assert.deepEqual(s.counts, counts({ cancelled: 6 }));
    assert.deepEqual(
      (await list('C', { cwd })).map((x) => x.attempts),
      [1, 1, 1, 0, 0, 0],
    );
    await waitFor(
      'the array to leave the queue',
      () => queued([l.handles.arrays[0]!.id]).length === 0,
      30_000,
      250,
    );
  });

  test('a packed launch of 1000 short tasks, 100 per element, completes with every task’s state and log', async (t) => {
    const cwd = slurmWorkspace(t);
    await prelaunch(cwd, 'P', 'echo', range(1000));
    const l = await launch(cwd, 'P', '--tasks-per-node', '100');
    assert.deepEqual(
      l.handles.arrays.map((a) => a.array),
      ['1-10'],
    );
    assert.equal(l.handles.tasks_per_node, 100);
    const s = await settled('P', cwd, 120_000);
    assert.deepEqual(s.counts, counts({ succeeded: 1000 }));
    const tasks = await list('P', { cwd });
    assert.ok(tasks.every((x) => x.state === 'succeeded' && x.exit_code === 0 && x.attempts === 1));
    for (const id of range(1000)) assert.equal(logOf(cwd, 'P', l.launch, id), `${id}\n`);
    const records = fs.readdirSync(path.join(cwd, '.drover', 'jobs', 'P', 'launches', l.launch, 'records'));
    assert.equal(records.length, 10, 'one runner per element');
  });

  test('two packed launches of one job at the same time both complete, each with its own files', async (t) => {
    const cwd = slurmWorkspace(t);
    writeScript(cwd, 'who.sh', 'echo "$1 launch $DROVER_LAUNCH slot $DROVER_SLOT"\n');
    await prelaunch(cwd, 'W', 'sh who.sh', range(60));
    const args = (list: string) => [
      'launch',
      '--backend',
      'slurm',
      '--jobname',
      'W',
      '--tasklist',
      list,
      '--tasks-per-node',
      '10',
      '--max-tasks-per-node',
      '4',
      '--json',
    ];
    const [a, b] = await Promise.all([
      startDrover(args('1-30'), { cwd }).result,
      startDrover(args('31-60'), { cwd }).result,
    ]);
    assert.equal(a.code, 0, a.stderr);
    assert.equal(b.code, 0, b.stderr);
    const la = JSON.parse(a.stdout) as Launched;
    const lb = JSON.parse(b.stdout) as Launched;
    assert.notEqual(la.launch, lb.launch);
    assert.deepEqual([la.handles.arrays[0]!.array, lb.handles.arrays[0]!.array], ['1-3', '1-3']);
    const s = await settled('W', cwd, 90_000);
    assert.deepEqual(s.counts, counts({ succeeded: 60 }));
    assert.deepEqual(s.launches.map((x) => [x.tasklist, x.counts.succeeded]).sort(), [
      ['1-30', 30],
      ['31-60', 30],
    ]);
    for (const [l, ids] of [
      [la, range(30, 1)],
      [lb, range(30, 31)],
    ] as const) {
      const file = JSON.parse(
        fs.readFileSync(path.join(cwd, '.drover', 'jobs', 'W', 'launches', l.launch, 'launch.json'), 'utf8'),
      ) as { groups: Record<string, { id: number }[]> };
      assert.deepEqual(
        Object.values(file.groups).flatMap((g) => g.map((x) => x.id)),
        [...ids],
      );
      for (const id of ids)
        assert.match(logOf(cwd, 'W', l.launch, id), new RegExp(`^${id} launch ${l.launch} slot [0-3]\\n$`));
    }
  });

  test('a packed element stops only the tasks cancelled in it; the rest of its tasks go on', {
    timeout: 120_000,
  }, async (t) => {
    const cwd = slurmWorkspace(t);
    await prelaunch(cwd, 'K', 'sleep', Array(8).fill(300));
    const l = await launch(cwd, 'K', '--tasks-per-node', '4', '--max-tasks-per-node', '2');
    await statusWhen(
      'K',
      { cwd },
      'two tasks running in each element',
      (s) => s.counts.running === 4,
      60_000,
    );
    // Task 1 runs and task 3 waits for a slot, both in element 1.
    const r = await runDrover(['cancel', 'K', '--tasklist', '1,3', '--yes'], { cwd });
    assert.equal(r.code, 0, r.stderr);
    await waitFor(
      'task 4 to take the freed slot',
      async () => (await list('K', { cwd }))[3]!.state === 'running',
      30_000,
      500,
    );
    assert.deepEqual(
      (await list('K', { cwd })).map((x) => x.state),
      ['cancelled', 'running', 'cancelled', 'running', 'running', 'running', 'queued', 'queued'],
    );
    assert.equal(queued([l.handles.arrays[0]!.id]).length, 2, 'both elements still run');
    const all = await runDrover(['cancel', 'K', '--yes'], { cwd });
    assert.equal(all.code, 0, all.stderr);
    assert.deepEqual((await settled('K', cwd, 60_000)).counts, counts({ cancelled: 8 }));
  });

  test('--retries runs drover’s runner in each element; --after and arguments after -- reach sbatch', async (t) => {
    const cwd = slurmWorkspace(t);
    writeScript(cwd, 'flaky.sh', 'if [ "$DROVER_ATTEMPT" = 1 ]; then exit 9; fi\necho "ok $1"\n');
    await prelaunch(cwd, 'R', 'sh flaky.sh', range(3));
    await prelaunch(cwd, 'A', 'sleep', [20]);
    const a = await launch(cwd, 'A');
    const aId = a.handles.arrays[0]!.id;
    const r = await launch(
      cwd,
      'R',
      '--retries',
      '1',
      '--retry-delay',
      '0.1',
      '--after',
      aId,
      '--',
      '--comment=drover-test',
    );
    const rId = r.handles.arrays[0]!.id;
    assert.equal(jobField(rId, 'Comment'), 'drover-test');
    assert.match(jobField(rId, 'Dependency') ?? '', new RegExp(`^afterok:${aId}`));
    assert.deepEqual((await settled('R', cwd, 60_000)).counts, counts({ succeeded: 3 }));
    assert.deepEqual(
      (await list('R', { cwd })).map((x) => x.attempts),
      [2, 2, 2],
    );
    assert.equal(logOf(cwd, 'R', r.launch, 2, 2), 'ok 2\n');
  });

  test('an element that dies before drover’s runner starts makes its task an error; one Slurm forgot, lost', async (t) => {
    const cwd = slurmWorkspace(t);
    await prelaunch(cwd, 'L', 'sleep', [300, 300, 300, 300, 300]);
    // The configured header ends element 2 before the runner starts.
    fs.writeFileSync(
      path.join(cwd, '.drover', 'config.json'),
      JSON.stringify({ slurm: { header: 'if [ "$SLURM_ARRAY_TASK_ID" = 2 ]; then exit 7; fi' } }),
    );
    const l = await launch(cwd, 'L', '--max-tasks', '2');
    const id = l.handles.arrays[0]!.id;
    await waitFor(
      'task 2 to be an error',
      async () => (await list('L', { cwd }))[1]!.state === 'error',
      60_000,
      500,
    );
    // Elements 1 and 3 run, 4 and 5 wait behind the %2 throttle. Element 4, scancelled outside drover while
    // it shares its pending record with 5, leaves no trace in Slurm (no squeue entry, no jobcomp line).
    await waitFor(
      'elements 4 and 5 pending',
      () => queued([id]).filter((l) => l === `${id}_4 PD` || l === `${id}_5 PD`).length === 2,
      30_000,
      250,
    );
    const r = spawnSync('scancel', [`${id}_4`]);
    assert.equal(r.status, 0);
    await waitFor(
      'task 4 to be lost',
      async () => (await list('L', { cwd }))[3]!.state === 'lost',
      30_000,
      500,
    );
    assert.deepEqual(
      (await list('L', { cwd })).map((x) => x.state),
      ['running', 'error', 'running', 'lost', 'queued'],
    );
    const c = await runDrover(['cancel', 'L', '--yes'], { cwd });
    assert.equal(c.code, 0, c.stderr);
    assert.deepEqual((await settled('L', cwd, 30_000)).counts, counts({ cancelled: 3, error: 1, lost: 1 }));
  });

  test('a partition that does not exist is one line and exit 2, and leaves no launch behind', async (t) => {
    const cwd = slurmWorkspace(t);
    await prelaunch(cwd, 'E', 'true', [1, 2]);
    const r = await runDrover(['launch', '--backend', 'slurm', '--jobname', 'E', '--partition', 'nosuch'], {
      cwd,
    });
    assert.equal(r.code, 2);
    assert.equal(lines(r.stderr).length, 1, r.stderr);
    assert.match(r.stderr, /Invalid partition name specified.*--partition/);
    const s = await status('E', { cwd });
    assert.deepEqual([s.launches.length, s.counts.pending], [0, 2]);
    const launches = path.join(cwd, '.drover', 'jobs', 'E', 'launches');
    assert.deepEqual(fs.existsSync(launches) ? fs.readdirSync(launches) : [], []);
  });

  test('more CPUs than any node has: a warning instead of a silent wait, and the launch can be cancelled', async (t) => {
    const cwd = slurmWorkspace(t);
    await prelaunch(cwd, 'B', 'true', [1]);
    const r = await runDrover(['launch', '--backend', 'slurm', '--jobname', 'B', '--cpus', '999'], { cwd });
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stderr,
      /warning: --cpus 999: no node of the default partition \(\w+\) has more than \d+ CPUs/,
    );
    assert.equal((await status('B', { cwd })).counts.queued, 1);
    const c = await runDrover(['cancel', 'B', '--yes'], { cwd });
    assert.equal(c.code, 0, c.stderr);
    assert.deepEqual((await settled('B', cwd, 30_000)).counts, counts({ cancelled: 1 }));
  });
});

/** Restart the test cluster with another MaxArraySize (slurm-up.sh restarts only when the config changes). */
function clusterWith(size: number): void {
  const cpus = spawnSync('sinfo', ['-h', '-o', '%c'], { encoding: 'utf8' }).stdout.trim().split('\n')[0];
  const r = spawnSync('bash', [path.join(repoRoot, 'scripts', 'test-cluster', 'slurm-up.sh')], {
    encoding: 'utf8',
    env: { ...process.env, SLURM_MAX_ARRAY_SIZE: String(size), ...(cpus ? { SLURM_NODE_CPUS: cpus } : {}) },
  });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(maxArraySize(), size);
}

// The suite restarts the shared test cluster (twice, a few seconds each): DROVER_TEST_SLURM_RESTART=0 skips it
// when other Slurm tests may be running against the same cluster.
const noRestart =
  process.getuid?.() !== 0
    ? 'restarting the test cluster needs root'
    : process.env.DROVER_TEST_SLURM_RESTART === '0'
      ? 'DROVER_TEST_SLURM_RESTART=0: the cluster is not restarted with a small MaxArraySize'
      : false;

describe('drover on a Slurm with MaxArraySize=10', { skip: SLURM_SKIP || noRestart }, () => {
  let original = 0;
  before(() => {
    original = maxArraySize();
    clusterWith(10);
  });
  after(() => clusterWith(original));

  test('25 tasks go out as three arrays of indices 1-9 that add up to the task ids; --failed splits too', async (t) => {
    const cwd = slurmWorkspace(t);
    writeScript(
      cwd,
      'f.sh',
      'if [ "$DROVER_ATTEMPT" = 1 ]; then case $1 in 3) exit 3;; 20) exit 20;; esac; fi\necho "$1"\n',
    );
    await prelaunch(cwd, 'M', 'sh f.sh', range(25));
    // --dry-run asks the cluster its MaxArraySize and shows the three sbatch commands, writing nothing.
    const dry = await droverJson<{ launch: null; tasks: number; submissions: string[][] }>(
      ['launch', '--backend', 'slurm', '--jobname', 'M', '--dry-run', '--json', '--', '--comment', 'a b'],
      { cwd },
    );
    assert.equal(dry.tasks, 25);
    assert.deepEqual(
      dry.submissions.map((c) => [
        c[0],
        c.find((a) => a.startsWith('--array=')),
        c.at(-1),
        c.at(-3),
        c.at(-4),
      ]),
      [
        ['sbatch', '--array=1-9', '0', 'a b', '--comment'],
        ['sbatch', '--array=1-9', '9', 'a b', '--comment'],
        ['sbatch', '--array=1-7', '18', 'a b', '--comment'],
      ],
    );
    assert.deepEqual((await status('M', { cwd })).launches, [], 'a dry run makes no launch');
    assert.deepEqual(arrayIds(cwd), []);
    const human = await runDrover(['launch', '--backend', 'slurm', '--jobname', 'M', '--dry-run'], { cwd });
    assert.equal(human.code, 0, human.stderr);
    assert.equal(human.stdout.split('\n')[0], '1\tsh f.sh 1');
    assert.match(human.stderr, /^ {2}sbatch --parsable --array=1-7 .*slurm\.sh 18$/m);
    const l = await launch(cwd, 'M');
    assert.deepEqual(
      l.handles.arrays.map((a) => [a.offset, a.array]),
      [
        [0, '1-9'],
        [9, '1-9'],
        [18, '1-7'],
      ],
    );
    assert.deepEqual((await settled('M', cwd, 60_000)).counts, counts({ succeeded: 23, failed: 2 }));
    assert.deepEqual(
      (await list('M', { cwd })).filter((x) => x.state === 'failed').map((x) => [x.task, x.exit_code]),
      [
        [3, 3],
        [20, 20],
      ],
    );
    for (const id of range(25))
      if (id !== 3 && id !== 20) assert.equal(logOf(cwd, 'M', l.launch, id), `${id}\n`);
    const rerun = await launch(cwd, 'M', '--failed');
    assert.deepEqual(
      rerun.handles.arrays.map((a) => [a.offset, a.array]),
      [
        [2, '1'],
        [19, '1'],
      ],
    );
    assert.deepEqual((await settled('M', cwd, 60_000)).counts, counts({ succeeded: 25 }));
  });

  test('--logs segments: packed elements write their slots’ segments, and every task’s log reads back exactly', async (t) => {
    const cwd = slurmWorkspace(t);
    // Task 7 prints nothing; task 9 fails after writing to both streams.
    writeScript(
      cwd,
      'p.sh',
      'if [ "$1" = 7 ]; then exit 0; fi; echo "out $1"; echo "err $1" >&2; [ "$1" != 9 ]\n',
    );
    await prelaunch(cwd, 'G', 'sh p.sh', range(40));
    const l = await launch(
      cwd,
      'G',
      '--tasks-per-node',
      '20',
      '--max-tasks-per-node',
      '2',
      '--logs',
      'segments',
    );
    const s = await settled('G', cwd, 60_000);
    assert.deepEqual(s.counts, counts({ succeeded: 39, failed: 1 }));
    for (const id of range(40)) {
      const out = await runDrover(['logs', 'G', String(id)], { cwd });
      const err = await runDrover(['logs', 'G', String(id), '--err'], { cwd });
      assert.equal(out.stdout, id === 7 ? '' : `out ${id}\n`, `task ${id} stdout`);
      assert.equal(err.stdout, id === 7 ? '' : `err ${id}\n`, `task ${id} stderr`);
    }
    // Two elements of two slots: their segments and indexes, and no file per task.
    const files = fs.readdirSync(path.join(cwd, '.drover', 'logs', 'G', String(l.launch)));
    assert.ok(!files.some((f) => /^\d+\.\d+\.(out|err)$/.test(f)), files.join(' '));
    assert.ok(files.length <= 12, `${files.length} log files: ${files.join(' ')}`);
  });

  test('a packed launch of 30 tasks, 2 per element, splits its 15 elements and runs every task', async (t) => {
    const cwd = slurmWorkspace(t);
    await prelaunch(cwd, 'N', 'echo', range(30));
    const l = await launch(cwd, 'N', '--tasks-per-node', '2');
    assert.deepEqual(
      l.handles.arrays.map((a) => [a.offset, a.array]),
      [
        [0, '1-9'],
        [9, '1-6'],
      ],
    );
    assert.deepEqual((await settled('N', cwd, 60_000)).counts, counts({ succeeded: 30 }));
    for (const id of range(30)) assert.equal(logOf(cwd, 'N', l.launch, id), `${id}\n`);
  });
});
