import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LaunchRequest } from '../../../src/backends/backend.js';
import {
  elementResources,
  memoryPerSlot,
  sanitizeJobName,
} from '../../../src/backends/gridengine/options.js';
import { DroverError } from '../../../src/errors.js';

const req = (r: Partial<LaunchRequest>): LaunchRequest => ({ tasksPerNode: 1, extraArgs: [], ...r });

/** Assert `fn` throws a usage error whose message matches `re`. */
function usage(fn: () => unknown, re: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof DroverError);
    assert.equal(err.code, 'usage');
    assert.match(err.message, re);
    assert.ok(!err.message.includes('\n'), 'one line');
    return true;
  });
}

test('job names become what Grid Engine accepts', () => {
  assert.equal(sanitizeJobName('sweep_1.a+b-c'), 'sweep_1.a+b-c');
  assert.equal(sanitizeJobName('7seeds'), 'j7seeds');
  assert.equal(sanitizeJobName('a b:c/d@e'), 'a_b_c_d_e');
  assert.equal(sanitizeJobName('none'), 'jnone');
  assert.equal(sanitizeJobName(''), 'j');
  assert.equal(sanitizeJobName('x'.repeat(300)).length, 100);
});

test('memory per slot is rounded up to whole MiB, in G when exact', () => {
  assert.equal(memoryPerSlot(4096, 1), '4G');
  assert.equal(memoryPerSlot(4096, 3), '1366M');
  assert.equal(memoryPerSlot(1536, 1), '1536M');
  assert.equal(memoryPerSlot(2 ** 30, 1), '1048576G');
});

test('one task per element: --cpus is a PE, the runner has one slot, limits map to qsub options', () => {
  const r = elementResources(
    req({ cpus: 4, memMb: 8192, gpus: 1, duration: 90, maxTasks: 5, after: '77', account: 'lab' }),
    { pe: 'threads', mem_resource: 'h_vmem', gpu_resource: 'gpu', queue: 'short.q' },
  );
  assert.deepEqual(r.args, [
    '-pe',
    'threads',
    '4',
    '-l',
    'h_vmem=2G',
    '-l',
    'gpu=1',
    '-l',
    'h_rt=90',
    '-tc',
    '5',
    '-q',
    'short.q',
    '-A',
    'lab',
    '-hold_jid',
    '77',
  ]);
  assert.equal(r.runnerSlots, 1);
  assert.equal(r.peSlots, 4);
});

test('--after takes blanks around its ids, as every list does', () => {
  assert.deepEqual(elementResources(req({ after: ' 77 , 78 ' }), {}).args, ['-hold_jid', '77,78']);
});

test('no resources asked: no options; the default PE is smp', () => {
  assert.deepEqual(elementResources(req({}), {}).args, []);
  assert.deepEqual(elementResources(req({ cpus: 2 }), {}).args, ['-pe', 'smp', '2']);
});

test('packed: M slots of C cpus each; GPUs for every slot; NSLOTS from a -pe after --', () => {
  const r = elementResources(req({ tasksPerNode: 100, maxTasksPerNode: 4, cpus: 2, gpus: 1 }), {
    gpu_resource: 'gpu',
  });
  assert.deepEqual(r.args, ['-pe', 'smp', '8', '-l', 'gpu=4']);
  assert.equal(r.runnerSlots, 4);
  const fromExtra = elementResources(req({ tasksPerNode: 10, extraArgs: ['-pe', 'mpi', '6'] }), {});
  assert.deepEqual(fromExtra.args, []);
  assert.equal(fromExtra.runnerSlots, 6);
  assert.equal(elementResources(req({ tasksPerNode: 10 }), {}).runnerSlots, 1);
});

test('--mem and --gpus without a resource name say which config key to set', () => {
  usage(() => elementResources(req({ memMb: 4096 }), {}), /drover config --write gridengine mem_resource/);
  usage(() => elementResources(req({ gpus: 1 }), {}), /drover config --write gridengine gpu_resource/);
});

test('requests Grid Engine cannot take as asked are usage errors', () => {
  usage(() => elementResources(req({ qos: 'high' }), {}), /--qos/);
  usage(() => elementResources(req({ extraArgs: ['-t', '1-3'] }), {}), /'-t' after --/);
  usage(() => elementResources(req({ extraArgs: ['-b', 'y'] }), {}), /'-b' after --/);
  usage(() => elementResources(req({ cpus: 2, extraArgs: ['-pe', 'smp', '2'] }), {}), /--cpus and a -pe/);
  usage(() => elementResources(req({ maxTasksPerNode: 2 }), {}), /--tasks-per-node/);
  usage(
    () => elementResources(req({ tasksPerNode: 5, extraArgs: ['-pe', 'smp', '2-8'] }), {}),
    /--max-tasks-per-node/,
  );
});

test('a small address-space limit (h_vmem) warns that the runner needs more', () => {
  const r = elementResources(req({ memMb: 512 }), { mem_resource: 'h_vmem' });
  assert.equal(r.warnings.length, 1);
  assert.match(r.warnings[0]!, /h_vmem/);
  assert.deepEqual(elementResources(req({ memMb: 512 }), { mem_resource: 'mem_free' }).warnings, []);
});
