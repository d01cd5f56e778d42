import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LaunchRequest } from '../../../src/backends/backend.js';
import { planSubmissions } from '../../../src/backends/cluster/plan.js';
import {
  checkSlurmRequest,
  parseJobId,
  sbatchArgs,
  sbatchCommonArgs,
  sbatchRefusal,
  slurmMinutes,
} from '../../../src/backends/slurm/sbatch-args.js';
import { runnerSettings } from '../../../src/backends/slurm/submit.js';
import type { RunSettings } from '../../../src/runner/group.js';

const base: LaunchRequest = { tasksPerNode: 1, extraArgs: [] };

test('every resource flag becomes its sbatch option; nothing is asked for when nothing is given', () => {
  assert.deepEqual(sbatchCommonArgs(base, 'J', '/l/slurm-%A_%a.out'), [
    '--job-name=J',
    '--output=/l/slurm-%A_%a.out',
  ]);
  const req: LaunchRequest = {
    ...base,
    cpus: 4,
    gpus: 2,
    memMb: 4096,
    duration: 90,
    partition: 'gpu',
    account: 'lab',
    qos: 'high',
    after: '12,13_4',
  };
  assert.deepEqual(sbatchCommonArgs(req, 'J', 'o'), [
    '--job-name=J',
    '--output=o',
    '--cpus-per-task=4',
    '--gres=gpu:2',
    '--mem=4G',
    '--time=2',
    '--partition=gpu',
    '--account=lab',
    '--qos=high',
    '--dependency=afterok:12:13_4',
  ]);
});

test('--duration rounds up to whole minutes, at least 1 (Slurm counts minutes)', () => {
  assert.equal(slurmMinutes(1), '1');
  assert.equal(slurmMinutes(60), '1');
  assert.equal(slurmMinutes(61), '2');
  assert.equal(slurmMinutes(86400), '1440');
});

test('the array spec carries the %N throttle, extra arguments come just before the script and its offset', () => {
  const [sub] = planSubmissions([1, 2, 3, 5, 6, 7, 8, 9, 13], {
    maxIndex: 100000,
    maxCount: 100001,
    oneRangePerSubmission: false,
  });
  const args = sbatchArgs(
    sub!,
    ['--job-name=J'],
    { maxTasks: 4, extraArgs: ['--nice=5', '--comment', 'x y'] },
    '/w.sh',
  );
  assert.deepEqual(args, [
    '--parsable',
    '--array=1-3,5-9,13%4',
    '--job-name=J',
    '--no-requeue',
    '--nice=5',
    '--comment',
    'x y',
    '/w.sh',
    '0',
  ]);
  // --requeue: Slurm keeps a preempted element to run it again, its output file appended to.
  const requeued = sbatchArgs(sub!, [], { extraArgs: [], requeue: 2 }, '/w.sh');
  assert.deepEqual(requeued.slice(2, 4), ['--requeue', '--open-mode=append']);
});

test('requests sbatch would misread are usage errors before anything is submitted', () => {
  for (const [req, re] of [
    [{ ...base, after: 'job12' }, /--after 'job12'/],
    [{ ...base, maxTasksPerNode: 4 }, /--max-tasks-per-node needs --tasks-per-node/],
  ] as const) {
    assert.throws(
      () => checkSlurmRequest(req),
      (e: Error & { code?: string }) => e.code === 'usage' && re.test(e.message),
    );
  }
  checkSlurmRequest({ ...base, memMb: 500, after: '12', tasksPerNode: 10, maxTasksPerNode: 2 });
});

test('--after takes blanks around its ids, as every list does; an empty item is still refused', () => {
  const after = ' 12 , 13_4 ';
  checkSlurmRequest({ ...base, after });
  assert.deepEqual(sbatchCommonArgs({ ...base, after }, 'J', 'o').slice(2), ['--dependency=afterok:12:13_4']);
  for (const bad of [' 12,', ' ', '12,,13'])
    assert.throws(
      () => checkSlurmRequest({ ...base, after: bad }),
      (e: Error & { code?: string }) => e.code === 'usage' && e.message.includes(`--after '${bad}'`),
    );
});

test('--mem in MiB becomes sbatch --mem in the largest exact unit Slurm knows (M, G, T)', () => {
  const mem = (memMb: number) => sbatchCommonArgs({ ...base, memMb }, 'J', 'o').slice(2);
  assert.deepEqual(mem(500), ['--mem=500M']);
  assert.deepEqual(mem(1536), ['--mem=1536M']);
  assert.deepEqual(mem(4096), ['--mem=4G']);
  assert.deepEqual(mem(2 * 1024 ** 2), ['--mem=2T']);
  assert.deepEqual(mem(1024 ** 3), ['--mem=1024T']);
});

test('the job id of sbatch --parsable, with or without a cluster name', () => {
  assert.equal(parseJobId('123\n'), '123');
  assert.equal(parseJobId('123;cluster\n'), '123');
  assert.equal(parseJobId('Submitted batch job 123\n'), undefined);
  // Cut short (no newline: `12` of `123`), the id could be another job's.
  assert.equal(parseJobId('12'), undefined);
  assert.equal(parseJobId('123;'), undefined);
});

test('a refusal is one line with Slurm’s reasons and what to do; the request is at fault (usage)', () => {
  const e = sbatchRefusal({
    status: 1,
    stdout: '',
    stderr:
      'sbatch: error: invalid partition specified: nosuch\nsbatch: error: Batch job submission failed: Invalid partition name specified\n',
  });
  assert.equal(e.code, 'usage');
  assert.equal(e.exitCode, 2);
  assert.ok(!e.message.includes('\n'));
  assert.match(
    e.message,
    /invalid partition specified: nosuch; Invalid partition name specified: check --partition/,
  );
  const mem = sbatchRefusal({
    status: 1,
    stdout: '',
    stderr:
      'sbatch: error: Memory specification can not be satisfied\nsbatch: error: Batch job submission failed: Requested node configuration is not available\n',
  });
  assert.match(mem.message, /Memory specification can not be satisfied.*lower --mem/);
  const down = sbatchRefusal({
    status: 1,
    stdout: '',
    stderr:
      'sbatch: error: Batch job submission failed: Unable to contact slurm controller (connect failure)\n',
  });
  assert.equal(down.code, 'backend');
});

const settings: RunSettings = {
  v: 1,
  job: 'J',
  launch: 1,
  retries: 0,
  retryDelay: 1,
  killGrace: 5,
  logDir: '/l',
  recordsDir: '/r',
  cancelDir: '/c',
  cwd: '/',
};

test('one task per element: the runner has one slot and the element’s GPUs are the task’s', () => {
  assert.equal(runnerSettings(settings, { ...base, cpus: 8 }).maxTasks, 1);
  assert.equal(runnerSettings(settings, { ...base, gpus: 2 }).gpusPerTask, 2);
});

test('packed: slots are --max-tasks-per-node, else --cpus, else 1; GPUs are shared out among the slots', () => {
  const packed = { ...base, tasksPerNode: 100 };
  assert.equal(runnerSettings(settings, packed).maxTasks, 1);
  assert.equal(runnerSettings(settings, { ...packed, cpus: 8 }).maxTasks, 8);
  assert.equal(runnerSettings(settings, { ...packed, cpus: 8, maxTasksPerNode: 3 }).maxTasks, 3);
  const gpu = runnerSettings(settings, { ...packed, gpus: 4, maxTasksPerNode: 2 });
  assert.deepEqual([gpu.maxTasks, gpu.gpusPerTask], [2, 2]);
  assert.equal(runnerSettings(settings, { ...packed, gpus: 2, maxTasksPerNode: 4 }).gpusPerTask, 1);
});

test('--signal becomes --signal=B:SIG@SECONDS with a time limit; beyond 65535 s or without --time the runner alone warns', () => {
  const signal = { signal: 'SIGUSR1' as const, seconds: 300 };
  const args = (req: Partial<LaunchRequest>) => sbatchCommonArgs({ ...base, ...req }, 'J', 'o').slice(2);
  assert.deepEqual(args({ duration: 3600, signal }), ['--time=60', '--signal=B:USR1@300']);
  assert.deepEqual(args({ duration: 86_400, signal: { signal: 'SIGTERM', seconds: 65_535 } }), [
    '--time=1440',
    '--signal=B:TERM@65535',
  ]);
  assert.deepEqual(args({ duration: 86_400, signal: { signal: 'SIGUSR2', seconds: 65_536 } }), [
    '--time=1440',
  ]);
  assert.deepEqual(args({ signal }), []);
});
