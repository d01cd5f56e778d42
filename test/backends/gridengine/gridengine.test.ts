import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe } from 'node:test';
import { counts, list, status } from '../../helpers/contract.js';
import { lines, runDrover, startDrover } from '../../helpers/drover.js';
import { isAlive, readRecords, waitFor, writeScript } from '../../helpers/workspace.js';
import {
  clusterTest,
  clusterWorkspace,
  dryRun,
  elementsInQueue,
  inQueue,
  launch,
  launchedJobs,
  prelaunch,
  rangeArg,
  settled,
} from './cluster.js';

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
    '--tasklist 1-3,7,9-12,20: the dry run shows one qsub, the launch runs and records exactly those 9 tasks',
    async (t) => {
      const cwd = clusterWorkspace(t);
      const values = Array.from({ length: 20 }, (_, i) => `v${i + 1}`);
      await prelaunch(cwd, 'B', '+command', 'echo', '+pos-arg', ...values);
      const wanted = [1, 2, 3, 7, 9, 10, 11, 12, 20];
      const dry = await dryRun(cwd, 'B', '--tasklist', '1-3,7,9-12,20');
      assert.equal(dry.tasklist, '1-3,7,9-12,20');
      assert.equal(dry.tasks, 9);
      assert.equal(dry.submissions.length, 1, JSON.stringify(dry.submissions));
      const [qsub] = dry.submissions;
      assert.deepEqual(
        [qsub![0], rangeArg(qsub!), qsub!.at(-2)!.endsWith('/element.sh'), qsub!.at(-1)],
        ['qsub', '1-9:1', true, '0'],
      );
      assert.deepEqual((await status('B', { cwd })).launches, [], 'a dry run makes no launch');

      const l = await launch(cwd, 'B', '--tasklist', '1-3,7,9-12,20');
      assert.deepEqual(
        l.handles.arrays.map((a) => [a.range, a.offset]),
        [['1-9:1', 0]],
      );
      assert.equal(l.handles.keys, 'index');
      const s = await settled(cwd, 'B');
      assert.deepEqual(s.counts, counts({ succeeded: 9, pending: 11 }));
      assert.equal(s.launches.length, 1);
      assert.deepEqual(s.launches[0]!.counts, counts({ succeeded: 9 }));
      const ran = (await list('B', { cwd })).filter((x) => x.state === 'succeeded').map((x) => x.task);
      assert.deepEqual(ran, wanted);
      const starts = readRecords(cwd).filter((r) => r.type === 'start');
      assert.deepEqual(
        starts.map((r) => r.task as number).sort((a, b) => a - b),
        wanted,
        'each task once',
      );
      for (const task of [7, 20]) {
        const log = await runDrover(['logs', 'B', String(task)], { cwd });
        assert.equal(log.stdout, `v${task}\n`);
      }
      // Grid Engine ran elements 1..9 of one array job: their own output files are named so.
      const id = l.handles.arrays[0]!.id;
      const outs = fs.readdirSync(path.join(cwd, '.drover/jobs/B/launches', l.launch, 'gridengine'));
      assert.deepEqual(
        outs.filter((f) => f.endsWith('.out')).sort(),
        Array.from({ length: 9 }, (_, i) => `${id}.${i + 1}.out`).sort(),
      );
    },
  );

  clusterTest(
    'scattered tasks stuck in Eqw show error with the reason; --failed deletes them and reruns them in one qsub',
    async (t) => {
      const cwd = clusterWorkspace(t);
      const out = path.join(cwd, 'element-logs');
      await prelaunch(cwd, 'E', '+command', 'echo', '+pos-arg', 'a', 'b', 'c', 'd', 'e', 'f');
      // Element output to a folder that does not exist: Grid Engine cannot start the elements.
      const first = await launch(cwd, 'E', '--tasklist', '1,3,6', '--', '-o', `${out}/`);
      assert.deepEqual(
        first.handles.arrays.map((a) => a.range),
        ['1-3:1'],
      );
      const s = await settled(cwd, 'E', 60_000);
      assert.deepEqual(s.counts, counts({ pending: 3, error: 3 }));
      const text = await runDrover(['status', 'E'], { cwd });
      assert.equal(text.code, 0, text.stderr);
      assert.match(text.stdout, /Eqw/);
      assert.match(text.stdout, /can't open output file/);
      const old = first.handles.arrays[0]!.id;
      assert.deepEqual([...elementsInQueue(old).keys()], [1, 2, 3], 'the Eqw elements wait in the queue');
      fs.mkdirSync(out);
      const dry = await dryRun(cwd, 'E', '--failed', '--', '-o', `${out}/`);
      assert.deepEqual(dry.submissions.map(rangeArg), ['1-3:1'], 'the relaunch is one qsub');
      const rerun = await launch(cwd, 'E', '--failed', '--', '-o', `${out}/`);
      assert.equal(rerun.tasks, 3);
      assert.deepEqual(
        rerun.handles.arrays.map((a) => a.range),
        ['1-3:1'],
      );
      await waitFor('the Eqw job deleted', () => !inQueue(old), 15_000);
      const after = await settled(cwd, 'E', 60_000);
      assert.deepEqual(after.counts, counts({ pending: 3, succeeded: 3 }));
      const tasks = await list('E', { cwd });
      assert.deepEqual(
        tasks.filter((x) => x.state !== 'pending').map((x) => [x.task, x.state, x.attempts]),
        [
          [1, 'succeeded', 2],
          [3, 'succeeded', 2],
          [6, 'succeeded', 2],
        ],
      );
      for (const [task, value] of [
        [1, 'a'],
        [3, 'c'],
        [6, 'f'],
      ] as const) {
        const log = await runDrover(['logs', 'E', String(task)], { cwd });
        assert.equal(log.stdout, `${value}\n`);
      }
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

  clusterTest(
    '--logs segments: packed elements write their slots’ segments; each task’s log reads back exactly',
    async (t) => {
      const cwd = clusterWorkspace(t);
      // Task 4 prints nothing; task 6 fails after writing to both streams.
      writeScript(
        cwd,
        'p.sh',
        'if [ "$1" = 4 ]; then exit 0; fi; echo "out $1"; echo "err $1" >&2; [ "$1" != 6 ]\n',
      );
      const ids = Array.from({ length: 24 }, (_, i) => String(i + 1));
      await prelaunch(cwd, 'G', '+command', 'sh p.sh', '+pos-arg', ...ids);
      const l = await launch(
        cwd,
        'G',
        '--tasks-per-node',
        '12',
        '--max-tasks-per-node',
        '2',
        '--logs',
        'segments',
      );
      const s = await settled(cwd, 'G');
      assert.deepEqual(s.counts, counts({ succeeded: 23, failed: 1 }));
      for (const id of ids) {
        const out = await runDrover(['logs', 'G', id], { cwd });
        const err = await runDrover(['logs', 'G', id, '--err'], { cwd });
        assert.equal(out.stdout, id === '4' ? '' : `out ${id}\n`, `task ${id} stdout`);
        assert.equal(err.stdout, id === '4' ? '' : `err ${id}\n`, `task ${id} stderr`);
      }
      const files = fs.readdirSync(path.join(cwd, '.drover', 'logs', 'G', l.launch));
      assert.ok(!files.some((f) => /^\d+\.\d+\.(out|err)$/.test(f)), files.join(' '));
      assert.ok(files.length <= 12, `${files.length} log files: ${files.join(' ')}`);
    },
  );

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
