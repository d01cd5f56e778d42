import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe } from 'node:test';
import { counts, list, status } from '../../helpers/contract.js';
import { runDrover } from '../../helpers/drover.js';
import { isAlive, readRecords, waitFor, writeScript } from '../../helpers/workspace.js';
import {
  clusterTest,
  clusterWorkspace,
  dryRun,
  elementsInQueue,
  launch,
  prelaunch,
  rangeArg,
  settled,
} from './cluster.js';

/**
 * One qsub per launch on the real Grid Engine: array elements 1..k run the launch's tasks in id order
 * (launch.json says which), whatever the tasklist; reruns, cancels and packing follow that numbering.
 */
describe('Grid Engine: one submission per launch', { concurrency: 3 }, () => {
  clusterTest('a --failed rerun of scattered tasks is one qsub and reruns exactly them', async (t) => {
    const cwd = clusterWorkspace(t);
    writeScript(
      cwd,
      'task.sh',
      'if [ -e fixed ]; then echo "fixed $1"; exit 0; fi\ncase "$1" in *x) exit 4;; esac\necho "$1"\n',
    );
    await prelaunch(
      cwd,
      'F',
      '+command',
      'bash task.sh',
      '+pos-arg',
      'a',
      'bx',
      'c',
      'dx',
      'ex',
      'f',
      'g',
      'hx',
    );
    const first = await launch(cwd, 'F');
    assert.deepEqual(
      first.handles.arrays.map((a) => a.range),
      ['1-8:1'],
    );
    const s = await settled(cwd, 'F');
    assert.deepEqual(s.counts, counts({ succeeded: 4, failed: 4 }));
    fs.writeFileSync(path.join(cwd, 'fixed'), '');
    const dry = await dryRun(cwd, 'F', '--failed');
    assert.equal(dry.tasklist, '2,4-5,8');
    assert.deepEqual(dry.submissions.map(rangeArg), ['1-4:1'], 'one qsub for tasks 2, 4-5 and 8');
    const rerun = await launch(cwd, 'F', '--failed');
    assert.equal(rerun.tasks, 4);
    assert.deepEqual(
      rerun.handles.arrays.map((a) => [a.range, a.offset]),
      [['1-4:1', 0]],
    );
    const after = await settled(cwd, 'F');
    assert.deepEqual(after.counts, counts({ succeeded: 8 }));
    assert.deepEqual(
      (await list('F', { cwd })).map((x) => [x.task, x.attempts]),
      [
        [1, 1],
        [2, 2],
        [3, 1],
        [4, 2],
        [5, 2],
        [6, 1],
        [7, 1],
        [8, 2],
      ],
    );
    for (const [task, value] of [
      [2, 'bx'],
      [8, 'hx'],
    ] as const) {
      const log = await runDrover(['logs', 'F', String(task)], { cwd });
      assert.equal(log.stdout, `fixed ${value}\n`);
    }
  });

  clusterTest('cancel --tasklist of a renumbered launch stops exactly those tasks', async (t) => {
    const cwd = clusterWorkspace(t);
    await prelaunch(
      cwd,
      'C',
      '+command',
      'sleep',
      '+pos-arg',
      ...Array.from({ length: 10 }, (_, i) => `${300 + i}`),
    );
    // Tasks 2, 4, 5, 6, 9 are elements 1..5; two run at a time.
    const l = await launch(cwd, 'C', '--tasklist', '2,4-6,9', '--max-tasks', '2', '--kill-grace', '1');
    const job = l.handles.arrays[0]!.id;
    assert.deepEqual(
      l.handles.arrays.map((a) => a.range),
      ['1-5:1'],
    );
    await waitFor(
      'tasks 2 and 4 running, 5, 6 and 9 queued',
      async () => {
        const tasks = await list('C', { cwd });
        const running = tasks.filter((x) => x.state === 'running').map((x) => x.task);
        return running.join() === '2,4' && tasks.filter((x) => x.state === 'queued').length === 3;
      },
      60_000,
      300,
    );
    const start4 = readRecords(cwd).find((r) => r.type === 'start' && r.task === 4)!;
    const start2 = readRecords(cwd).find((r) => r.type === 'start' && r.task === 2)!;
    const r = await runDrover(['cancel', 'C', '--tasklist', '4,9', '--yes'], { cwd });
    assert.equal(r.code, 0, r.stderr);
    // Task 4 is element 2 (running), task 9 element 5 (pending): only those elements leave Grid Engine.
    await waitFor(
      'elements 2 and 5 gone',
      () => {
        const q = elementsInQueue(job);
        return !q.has(2) && !q.has(5);
      },
      30_000,
    );
    assert.deepEqual([...elementsInQueue(job).keys()].sort(), [1, 3, 4]);
    await waitFor('task 4 stopped', () => !isAlive(start4.pid as number), 15_000);
    assert.ok(isAlive(start2.pid as number), 'task 2 still runs');
    const mid = await waitFor(
      'tasks 4 and 9 cancelled',
      async () => {
        const tasks = await list('C', { cwd });
        const cancelled = tasks.filter((x) => x.state === 'cancelled').map((x) => x.task);
        return cancelled.join() === '4,9' ? tasks : undefined;
      },
      30_000,
      300,
    );
    assert.deepEqual(
      mid
        .filter((x) => [2, 5, 6].includes(x.task))
        .map((x) => [x.task, ['queued', 'running'].includes(x.state)]),
      [
        [2, true],
        [5, true],
        [6, true],
      ],
    );
    const all = await runDrover(['cancel', 'C', '--yes'], { cwd });
    assert.equal(all.code, 0, all.stderr);
    const s = await settled(cwd, 'C', 60_000);
    assert.deepEqual(s.counts, counts({ cancelled: 5, pending: 5 }));
    for (const rec of readRecords(cwd).filter((x) => x.type === 'start'))
      await waitFor(`task ${rec.task} stopped`, () => !isAlive(rec.pid as number), 15_000);
    await waitFor('the array gone from Grid Engine', () => elementsInQueue(job).size === 0, 30_000);
  });

  clusterTest('packed, a scattered tasklist is one qsub of consecutive chunks', async (t) => {
    const cwd = clusterWorkspace(t);
    const values = Array.from({ length: 20 }, (_, i) => `v${i + 1}`);
    await prelaunch(cwd, 'P', '+command', 'echo', '+pos-arg', ...values);
    const args = ['--tasklist', '1-3,7,9-12,20', '--tasks-per-node', '4', '--max-tasks-per-node', '2'];
    const dry = await dryRun(cwd, 'P', ...args);
    assert.deepEqual(dry.submissions.map(rangeArg), ['1-3:1']);
    const l = await launch(cwd, 'P', ...args);
    assert.deepEqual(
      l.handles.arrays.map((a) => a.range),
      ['1-3:1'],
    );
    const file = JSON.parse(
      fs.readFileSync(path.join(cwd, '.drover/jobs/P/launches', l.launch, 'launch.json'), 'utf8'),
    ) as { groups: Record<string, { id: number }[]> };
    assert.deepEqual(
      Object.entries(file.groups).map(([k, g]) => [k, g.map((x) => x.id)]),
      [
        ['1', [1, 2, 3, 7]],
        ['2', [9, 10, 11, 12]],
        ['3', [20]],
      ],
    );
    const s = await settled(cwd, 'P');
    assert.deepEqual(s.counts, counts({ succeeded: 9, pending: 11 }));
    const starts = readRecords(cwd).filter((r) => r.type === 'start');
    assert.deepEqual(
      starts.map((r) => r.task as number).sort((a, b) => a - b),
      [1, 2, 3, 7, 9, 10, 11, 12, 20],
    );
    for (const r of starts) assert.equal(fs.readFileSync(r.out as string, 'utf8'), `v${r.task}\n`);
    assert.deepEqual((await status('P', { cwd })).launches[0]!.counts, counts({ succeeded: 9 }));
  });
});
