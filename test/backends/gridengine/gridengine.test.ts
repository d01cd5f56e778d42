import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe } from 'node:test';
import { counts, list, status } from '../../helpers/contract.js';
import { droverJson, lines, runDrover, startDrover } from '../../helpers/drover.js';
import { isAlive, readRecords, waitFor, writeScript } from '../../helpers/workspace.js';
import { clusterTest, clusterWorkspace, inQueue, launchedJobs } from './cluster.js';

/** What `drover launch --backend gridengine --json` prints. */
interface Launched {
  launch: string;
  tasks: number;
  handles: { arrays: { id: string; offset: number; range: string }[]; tasksPerNode: number; keys: string };
  warnings: string[];
}

/** Make job `job` in `cwd` with a real prelaunch. */
async function prelaunch(cwd: string, job: string, ...args: string[]): Promise<void> {
  const r = await runDrover(['prelaunch', '+jobname', job, ...args, '+q'], { cwd });
  assert.equal(r.code, 0, r.stderr);
}

/** `drover launch --backend gridengine ... --json`. */
function launch(cwd: string, job: string, ...args: string[]): Promise<Launched> {
  const extra = args.indexOf('--');
  const own = extra < 0 ? args : args.slice(0, extra);
  const after = extra < 0 ? [] : args.slice(extra);
  return droverJson<Launched>(
    ['launch', '--backend', 'gridengine', '--jobname', job, ...own, '--json', ...after],
    {
      cwd,
    },
  );
}

/** Wait until no task of the job is queued or running; returns its status. */
function settled(cwd: string, job: string, timeoutMs = 120_000) {
  return waitFor(
    `job ${job} settled`,
    async () => {
      const s = await status(job, { cwd });
      return s.counts.queued + s.counts.running === 0 ? s : undefined;
    },
    timeoutMs,
    500,
  );
}

describe('Grid Engine backend on a real cluster', { concurrency: 4 }, () => {
  clusterTest('failing tasks and one over its h_rt: exact counts and exit codes', async (t) => {
    const cwd = clusterWorkspace(t);
    writeScript(cwd, 'task.sh', 'if [ "$1" = slow ]; then exec sleep 120; fi\necho "task $1"\nexit "$1"\n');
    await prelaunch(cwd, 'S', '+command', 'bash task.sh', '+pos-arg', '0', '3', '0', '7', 'slow');
    const l = await launch(cwd, 'S', '--duration', '6s', '--kill-grace', '1');
    assert.equal(l.handles.arrays.length, 1);
    assert.equal(l.handles.arrays[0]!.range, '1-5:1');
    const s = await settled(cwd, 'S');
    assert.deepEqual(s.counts, counts({ succeeded: 2, failed: 2, timeout: 1 }));
    const tasks = await list('S', { cwd });
    assert.deepEqual(
      tasks.map((x) => [x.task, x.state, x.exit_code]),
      [
        [1, 'succeeded', 0],
        [2, 'failed', 3],
        [3, 'succeeded', 0],
        [4, 'failed', 7],
        [5, 'timeout', null],
      ],
    );
    const logs = await runDrover(['logs', 'S', '4'], { cwd });
    assert.match(logs.stdout, /task 7/);
    // The task over the limit was stopped, not left running on the node.
    const slow = readRecords(cwd).find((r) => r.type === 'start' && r.task === 5);
    assert.ok(slow, 'task 5 started');
    await waitFor('the slow task gone', () => !isAlive(slow.pid as number), 15_000);
  });

  clusterTest(
    'a tasklist of several blocks becomes one qsub per block and runs exactly those tasks',
    async (t) => {
      const cwd = clusterWorkspace(t);
      await prelaunch(
        cwd,
        'B',
        '+command',
        'echo',
        '+pos-arg',
        ...Array.from({ length: 12 }, (_, i) => `v${i + 1}`),
      );
      // --dry-run shows the three qsub commands (one per block) and writes nothing.
      const dry = await droverJson<{ tasks: number; tasklist: string; submissions: string[][] }>(
        [
          'launch',
          '--backend',
          'gridengine',
          '--jobname',
          'B',
          '--tasklist',
          '1-2,5,8-12:2',
          '--dry-run',
          '--json',
        ],
        { cwd },
      );
      assert.equal(dry.tasklist, '1-2,5,8-12:2');
      assert.deepEqual(
        dry.submissions.map((c) => [c[0], c[c.indexOf('-t') + 1], c.at(-2)!.endsWith('/element.sh')]),
        [
          ['qsub', '1-2:1', true],
          ['qsub', '5-5:1', true],
          ['qsub', '8-12:2', true],
        ],
      );
      assert.deepEqual((await status('B', { cwd })).launches, [], 'a dry run makes no launch');
      const l = await launch(cwd, 'B', '--tasklist', '1-2,5,8-12:2');
      assert.deepEqual(
        l.handles.arrays.map((a) => [a.range, a.offset]),
        [
          ['1-2:1', 0],
          ['5-5:1', 0],
          ['8-12:2', 0],
        ],
      );
      assert.equal(new Set(l.handles.arrays.map((a) => a.id)).size, 3);
      const s = await settled(cwd, 'B');
      assert.deepEqual(s.counts, counts({ succeeded: 6, pending: 6 }));
      const ran = (await list('B', { cwd })).filter((x) => x.state === 'succeeded').map((x) => x.task);
      assert.deepEqual(ran, [1, 2, 5, 8, 10, 12]);
      const log = await runDrover(['logs', 'B', '10'], { cwd });
      assert.equal(log.stdout, 'v10\n');
    },
  );

  clusterTest(
    'a task stuck in Eqw shows error with the reason; --failed deletes and reruns it',
    async (t) => {
      const cwd = clusterWorkspace(t);
      const out = path.join(cwd, 'element-logs');
      await prelaunch(cwd, 'E', '+command', 'echo', '+pos-arg', 'a', 'b', 'c');
      // Element output to a folder that does not exist: Grid Engine cannot start the element.
      const first = await launch(cwd, 'E', '--tasklist', '2-3', '--', '-o', `${out}/`);
      const s = await settled(cwd, 'E', 60_000);
      assert.deepEqual(s.counts, counts({ pending: 1, error: 2 }));
      const text = await runDrover(['status', 'E'], { cwd });
      assert.equal(text.code, 0, text.stderr);
      assert.match(text.stdout, /Eqw/);
      assert.match(text.stdout, /can't open output file/);
      assert.ok(inQueue(first.handles.arrays[0]!.id), 'the Eqw element waits in the queue');
      fs.mkdirSync(out);
      const rerun = await launch(cwd, 'E', '--failed', '--', '-o', `${out}/`);
      assert.equal(rerun.tasks, 2);
      await waitFor('the Eqw job deleted', () => !inQueue(first.handles.arrays[0]!.id), 15_000);
      const after = await settled(cwd, 'E', 60_000);
      assert.deepEqual(after.counts, counts({ pending: 1, succeeded: 2 }));
      const tasks = await list('E', { cwd });
      assert.deepEqual(
        tasks.map((x) => [x.task, x.state, x.attempts]),
        [
          [1, 'pending', 0],
          [2, 'succeeded', 2],
          [3, 'succeeded', 2],
        ],
      );
    },
  );

  clusterTest('cancel of pending and running tasks records cancelled and stops them', async (t) => {
    const cwd = clusterWorkspace(t);
    await prelaunch(cwd, 'C', '+command', 'sleep', '+pos-arg', '300', '301', '302', '303', '304');
    const l = await launch(cwd, 'C', '--max-tasks', '2', '--kill-grace', '1');
    await waitFor(
      '2 running, 3 queued',
      async () => {
        const s = await status('C', { cwd });
        return s.counts.running === 2 && s.counts.queued === 3;
      },
      60_000,
      300,
    );
    const r = await runDrover(['cancel', 'C', '--yes'], { cwd });
    assert.equal(r.code, 0, r.stderr);
    const s = await settled(cwd, 'C', 60_000);
    assert.deepEqual(s.counts, counts({ cancelled: 5 }));
    for (const rec of readRecords(cwd).filter((x) => x.type === 'start'))
      await waitFor(`task ${rec.task} stopped`, () => !isAlive(rec.pid as number), 15_000);
    await waitFor('the array gone from Grid Engine', () => !inQueue(l.handles.arrays[0]!.id), 30_000);
  });

  clusterTest('a packed launch of 500 short tasks: every task has its state and its log', async (t) => {
    const cwd = clusterWorkspace(t);
    const values = Array.from({ length: 500 }, (_, i) => String(i + 1));
    await prelaunch(cwd, 'P', '+command', 'echo', '+arg', '--i', ...values);
    const l = await launch(cwd, 'P', '--tasks-per-node', '100', '--max-tasks-per-node', '4');
    assert.deepEqual(
      l.handles.arrays.map((a) => a.range),
      ['1-5:1'],
    );
    const s = await settled(cwd, 'P');
    assert.deepEqual(s.counts, counts({ succeeded: 500 }));
    const tasks = await list('P', { cwd });
    assert.ok(tasks.every((x) => x.state === 'succeeded' && x.exit_code === 0 && x.attempts === 1));
    const starts = readRecords(cwd).filter((r) => r.type === 'start');
    assert.equal(starts.length, 500);
    for (const r of starts) {
      assert.equal(fs.readFileSync(r.out as string, 'utf8'), `--i ${r.task}\n`);
    }
    assert.equal(new Set(starts.map((r) => r.slot)).size, 4, 'four slots per element');
  });

  clusterTest('packed launches of one job at once: GPUs pinned per slot, no collisions', async (t) => {
    const cwd = clusterWorkspace(t);
    // The test cluster has no GPUs: the site's GPU resource is stood in by one every host satisfies, and the
    // devices a site's prolog would set come from the submitting environment (qsub -V).
    const cfg = await runDrover(['config', '--write', 'gridengine', 'gpu_resource', 'mem_free'], { cwd });
    assert.equal(cfg.code, 0, cfg.stderr);
    await prelaunch(
      cwd,
      'G',
      '+command',
      'bash -c "sleep 1; echo $CUDA_VISIBLE_DEVICES"',
      '+pos-arg',
      ...'12345678',
    );
    const args = (list: string) => [
      'launch',
      '--backend',
      'gridengine',
      '--jobname',
      'G',
      '--tasklist',
      list,
      '--tasks-per-node',
      '2',
      '--max-tasks-per-node',
      '2',
      '--gpus',
      '2',
      '--json',
    ];
    const env = { CUDA_VISIBLE_DEVICES: '0,1,2,3' };
    const [a, b] = await Promise.all([
      startDrover(args('1-4'), { cwd, env }).result,
      startDrover(args('5-8'), { cwd, env }).result,
    ]);
    assert.equal(a.code, 0, a.stderr);
    assert.equal(b.code, 0, b.stderr);
    const s = await settled(cwd, 'G');
    assert.deepEqual(s.counts, counts({ succeeded: 8 }));
    assert.equal(s.launches.length, 2);
    const starts = readRecords(cwd).filter((r) => r.type === 'start');
    assert.equal(starts.length, 8);
    assert.equal(new Set(starts.map((r) => r.out)).size, 8, 'a log file per task');
    for (const r of starts) {
      const gpus = r.slot === 0 ? '0,1' : '2,3';
      assert.equal(r.gpus, gpus);
      assert.equal(fs.readFileSync(r.out as string, 'utf8'), `${gpus}\n`);
    }
    assert.ok(
      starts.some((r) => r.slot === 1),
      'both slots used',
    );
    assert.equal(launchedJobs(cwd).length, 2);
  });

  clusterTest('bad requests exit 2 with one line and leave no launch behind', async (t) => {
    const cwd = clusterWorkspace(t);
    await prelaunch(cwd, 'U', '+command', 'echo', '+pos-arg', 'x');
    const mem = await runDrover(['launch', '--backend', 'gridengine', '--jobname', 'U', '--mem', '4G'], {
      cwd,
    });
    assert.equal(mem.code, 2);
    assert.equal(lines(mem.stderr).length, 1, mem.stderr);
    assert.match(mem.stderr, /drover config --write gridengine mem_resource/);
    const refused = await runDrover(
      ['launch', '--backend', 'gridengine', '--jobname', 'U', '--', '-l', 'no_such_resource=1'],
      { cwd },
    );
    assert.equal(refused.code, 2);
    assert.equal(lines(refused.stderr).length, 1, refused.stderr);
    assert.match(refused.stderr, /Grid Engine refused the submission: .*no_such_resource/);
    const s = await status('U', { cwd });
    assert.deepEqual(s.counts, counts({ pending: 1 }));
    assert.deepEqual(s.launches, []);
  });
});
