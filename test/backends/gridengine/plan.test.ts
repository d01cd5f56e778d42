import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseMaxAjTasks } from '../../../src/backends/gridengine/cluster-config.js';
import { launchElements } from '../../../src/backends/gridengine/handles.js';
import { elementResources } from '../../../src/backends/gridengine/options.js';
import { planElements, planLaunch } from '../../../src/backends/gridengine/plan.js';
import { expandBlocks, parseBlocks } from '../../../src/tasklist/tasklist.js';

/** Pure planning of Grid Engine launches: which element runs which tasks, and the qsub calls. */

const tasks = (ids: number[]) => ids.map((id) => ({ id, command: `c${id}`, tag: '', attempt: 1 }));
const SCATTERED = [1, 2, 3, 7, 9, 10, 11, 12, 20];

test('a scattered tasklist is one submission of elements 1..k, the k-th running the k-th task', () => {
  const { groups, subs } = planElements(tasks(SCATTERED), 1, 75000);
  assert.deepEqual(
    groups.map((g) => [g.key, g.tasks.map((t) => t.id)]),
    SCATTERED.map((id, i) => [i + 1, [id]]),
  );
  assert.deepEqual(
    subs.map((s) => [s.offset, s.blocks, s.count]),
    [[0, [{ first: 1, last: 9, step: 1 }], 9]],
  );
});

test('tasks given out of order are numbered in id order', () => {
  const { groups } = planElements(tasks([20, 3, 7, 1]), 1, 75000);
  assert.deepEqual(
    groups.map((g) => [g.key, g.tasks[0]!.id]),
    [
      [1, 1],
      [2, 3],
      [3, 7],
      [4, 20],
    ],
  );
});

test('packed: consecutive chunks of the launch tasks, one submission', () => {
  const { groups, subs } = planElements(tasks(SCATTERED), 4, 75000);
  assert.deepEqual(
    groups.map((g) => [g.key, g.tasks.map((t) => t.id)]),
    [
      [1, [1, 2, 3, 7]],
      [2, [9, 10, 11, 12]],
      [3, [20]],
    ],
  );
  assert.equal(subs.length, 1);
  assert.equal(subs[0]!.count, 3);
});

test('past max_aj_tasks: as few submissions as the limit needs, each re-based to 1', () => {
  const { subs } = planElements(tasks(SCATTERED), 1, 4);
  assert.deepEqual(
    subs.map((s) => [s.offset, s.blocks[0], s.count]),
    [
      [0, { first: 1, last: 4, step: 1 }, 4],
      [4, { first: 1, last: 4, step: 1 }, 4],
      [8, { first: 1, last: 1, step: 1 }, 1],
    ],
  );
});

test('the handles of the plan map every element back to the task it runs, split or not', () => {
  for (const limit of [75000, 4, 1]) {
    for (const perNode of [1, 2, 4]) {
      const { groups, subs } = planElements(tasks(SCATTERED), perNode, limit);
      const arrays = subs.map((s, i) => ({
        id: String(100 + i),
        offset: s.offset,
        range: `${s.blocks[0]!.first}-${s.blocks[0]!.last}:${s.blocks[0]!.step}`,
      }));
      const elements = launchElements({ arrays, tasksPerNode: perNode, keys: 'index' }, SCATTERED);
      assert.deepEqual(
        elements.map((e) => [e.key, e.tasks]),
        groups.map((g) => [g.key, g.tasks.map((t) => t.id)]),
        `limit ${limit}, ${perNode} per element`,
      );
      for (const e of elements) {
        const a = arrays.find((x) => x.id === e.job)!;
        assert.equal(a.offset + e.index, e.key, 'element index + the array offset is its key');
        assert.ok(expandBlocks(parseBlocks(a.range)).includes(e.index));
      }
    }
  }
});

test('the qsub argv: one -t range, the script and its offset last', () => {
  const res = elementResources({ tasksPerNode: 1, extraArgs: [], cpus: 2 }, {});
  const plan = planLaunch(
    tasks(SCATTERED),
    { tasksPerNode: 1, extraArgs: ['-P', 'proj'] },
    { job: '1bad name', launchDir: '/l/7', maxAjTasks: 75000 },
    res,
  );
  assert.equal(plan.subs.length, 1);
  const argv = plan.subs[0]!.argv;
  assert.deepEqual(argv.slice(argv.indexOf('-t')), ['-t', '1-9:1', '/l/7/element.sh', '0']);
  assert.equal(argv.filter((a) => a === '-t').length, 1);
  assert.deepEqual(argv.slice(argv.indexOf('-N'), argv.indexOf('-N') + 2), ['-N', 'j1bad_name']);
  // Never rescheduled without --requeue (its tasks would run again under the same attempt numbers).
  assert.ok(argv.join(' ').includes('-pe smp 2 -r n -P proj -t'), argv.join(' '));
  const requeued = planLaunch(
    tasks(SCATTERED),
    { tasksPerNode: 1, extraArgs: [], requeue: 1 },
    { job: 'j', launchDir: '/l/7', maxAjTasks: 75000 },
    res,
  );
  assert.ok(requeued.subs[0]!.argv.join(' ').includes('-pe smp 2 -r y -t'));
  const split = planLaunch(
    tasks(SCATTERED),
    { tasksPerNode: 1, extraArgs: [] },
    { job: 'j', launchDir: '/l/7', maxAjTasks: 5 },
    res,
  );
  assert.deepEqual(
    split.subs.map((s) => s.argv.slice(-4)),
    [
      ['-t', '1-5:1', '/l/7/element.sh', '0'],
      ['-t', '1-4:1', '/l/7/element.sh', '5'],
    ],
  );
});

test('max_aj_tasks from qconf -sconf: wrapped lines, 0 for no limit, none when absent', () => {
  const conf = [
    '#global:',
    'execd_spool_dir              /var/spool/gridengine/execd',
    'reporting_params             accounting=true reporting=false \\',
    '                             flush_time=00:00:01 joblog=false',
    'max_aj_instances             2000',
    'max_aj_tasks                 75000',
    'max_u_jobs                   0',
    '',
  ].join('\n');
  assert.deepEqual(parseMaxAjTasks(conf), { ok: true, value: 75000 });
  assert.deepEqual(parseMaxAjTasks(conf.replace('75000', '1200')), { ok: true, value: 1200 });
  assert.deepEqual(parseMaxAjTasks(conf.replace('75000', '0')), {
    ok: true,
    value: Number.POSITIVE_INFINITY,
  });
  assert.equal(parseMaxAjTasks(conf.replace('max_aj_tasks', 'max_aj_tasks_not')).ok, false);
  assert.equal(parseMaxAjTasks('error: commlib error\n').ok, false);
  // Cut inside its line: `max_aj_tasks 75` is not the limit.
  assert.equal(parseMaxAjTasks(conf.slice(0, conf.indexOf('75000') + 2)).ok, false);
});
