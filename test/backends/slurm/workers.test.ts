import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { WorkerArray } from '../../../src/backends/cluster/workers.js';
import { workerChunks } from '../../../src/backends/cluster/workers.js';
import { sbatchCommonArgs } from '../../../src/backends/slurm/sbatch-args.js';
import { workerSbatchArgs } from '../../../src/backends/slurm/workers.js';

/** Pool workers on Slurm are asked for with the builders of an array launch (issue 33 §1), not a copy of them. */

const array = (request: Partial<WorkerArray['request']> = {}): WorkerArray => ({
  pool: 'p',
  count: 3,
  script: '/w/worker.sh',
  cwd: '/w',
  logDir: '/w/workers',
  request: { tasksPerNode: 1, extraArgs: [], ...request },
  config: {},
});

test('a worker array asks what a launch of one task per element with the same resources asks', () => {
  const request = { cpus: 2, gpus: 1, memMb: 4096, duration: 3601, partition: 'gpu', account: 'a', qos: 'q' };
  const argv = workerSbatchArgs(array(request), 3);
  assert.deepEqual(argv.slice(0, 3), ['--parsable', '--array=1-3', '--chdir=/w']);
  const common = sbatchCommonArgs(array(request).request, 'drover-pool-p', '/w/workers/slurm-%A_%a.log');
  assert.deepEqual(argv.slice(3, -1), common);
  assert.ok(argv.includes('--time=61'), 'Slurm minutes, rounded up');
  assert.ok(argv.includes('--mem=4G'));
  assert.equal(argv.at(-1), '/w/worker.sh');
});

test('workers beyond the array limit are split into arrays of at most the limit', () => {
  assert.deepEqual(workerChunks(5, 2), [2, 2, 1]);
  assert.deepEqual(workerChunks(1000, 1000), [1000]);
  assert.deepEqual(workerChunks(3, 0), [1, 1, 1], 'a limit below one still submits');
  assert.deepEqual(workerChunks(0, 10), []);
});
