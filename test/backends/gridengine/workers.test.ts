import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { WorkerArray } from '../../../src/backends/cluster/workers.js';
import { workerQsubArgs } from '../../../src/backends/gridengine/workers.js';

/**
 * Pool workers on Grid Engine take the resources an array launch takes (options.ts, issue 33 §1): memory per
 * slot in the site's memory resource, GPUs only in a configured resource, the parallel environment configured.
 */

const array = (
  request: Partial<WorkerArray['request']>,
  config: Record<string, string> = {},
): WorkerArray => ({
  pool: 'p',
  count: 2,
  script: '/w/worker.sh',
  cwd: '/w',
  logDir: '/w/workers',
  request: { tasksPerNode: 1, extraArgs: [], ...request },
  config,
});

test('memory is split per slot in the configured resource, and the parallel environment is the configured one', () => {
  const argv = workerQsubArgs(array({ cpus: 2, memMb: 4096 }, { pe: 'mpi', mem_resource: 'mem_free' }), 2);
  const at = (flag: string, value: string) =>
    argv.some(
      (a, i) =>
        a === flag &&
        argv
          .slice(i + 1)
          .join(' ')
          .startsWith(value),
    );
  assert.ok(at('-pe', 'mpi 2'), argv.join(' '));
  assert.ok(at('-l', 'mem_free=2G'), argv.join(' '));
  assert.ok(at('-t', '1-2'));
  assert.ok(at('-N', 'drover-pool-p'));
  assert.equal(argv.at(-1), '/w/worker.sh');
});

test('GPUs or memory without the site’s resource name are refused, naming the config key to set', () => {
  assert.throws(() => workerQsubArgs(array({ gpus: 1 }), 1), /gpu_resource/);
  assert.throws(() => workerQsubArgs(array({ memMb: 1024 }), 1), /mem_resource/);
});

test('a duration is h_rt in seconds and a queue is -q', () => {
  const argv = workerQsubArgs(array({ duration: 90, partition: 'long.q' }), 1);
  assert.ok(argv.includes('h_rt=90'));
  assert.deepEqual(argv.slice(argv.indexOf('-q'), argv.indexOf('-q') + 2), ['-q', 'long.q']);
});
