import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { LaunchSpec } from '../../src/launch/spec.js';
import { fromWire, toWire } from '../../src/launch/wire.js';

/**
 * A pool launch crosses the wire as one request (`drover launch --pool` to the controller): whatever the CLI's
 * spec held comes out of the controller's side as it went in, for the fields a pool launch has.
 */

const text = fc.string({ minLength: 1, maxLength: 20 });
const spec: fc.Arbitrary<LaunchSpec> = fc
  .record(
    {
      pool: fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/),
      jobname: fc.stringMatching(/^[A-Za-z][\w.-]{0,15}$/),
      jobfile: fc.constantFrom('/abs/jobs.json', '/tmp/x/y.json'),
      tasklist: fc.constantFrom('1-3', '1-9:2,12', '5'),
      failed: fc.constant(true),
      unfinished: fc.constant(true),
      cpus: fc.integer({ min: 1, max: 64 }),
      gpus: fc.integer({ min: 0, max: 8 }),
      memMb: fc.integer({ min: 1, max: 1 << 20 }),
      retries: fc.integer({ min: 0, max: 10 }),
      taskTimeout: fc.integer({ min: 1, max: 86_400 }),
      signal: fc
        .record({
          signal: fc.constantFrom<NodeJS.Signals>('SIGUSR1', 'SIGUSR2', 'SIGTERM', 'SIGINT'),
          seconds: fc.integer({ min: 1, max: 86_400 }),
        })
        .map((w) => ({ ...w })),
      env: fc.dictionary(fc.stringMatching(/^[A-Z_]{1,8}$/), text, { maxKeys: 3 }).map((d) => ({ ...d })),
      dryRun: fc.constant(true),
      result: fc.constantFrom('file' as const, 'stdout' as const),
      logs: fc.constantFrom('files' as const, 'segments' as const),
    },
    { requiredKeys: ['pool'] },
  )
  .chain((r) =>
    fc
      .record({
        command: fc.option(text, { nil: undefined }),
        numJobs: fc.integer({ min: 1, max: 1000 }),
        retryDelay: fc.integer({ min: 0, max: 60 }),
        killGrace: fc.integer({ min: 0, max: 60 }),
        argv: fc.array(text, { maxLength: 4 }),
      })
      .map((x): LaunchSpec => {
        const { pool, cpus, gpus, memMb, command: _c, ...rest } = { ...r, command: undefined };
        return {
          ...rest,
          backend: `pool:${pool}`,
          ...(x.command !== undefined ? { command: x.command, numJobs: x.numJobs } : {}),
          request: {
            ...(cpus !== undefined ? { cpus } : {}),
            ...(gpus !== undefined ? { gpus } : {}),
            ...(memMb !== undefined ? { memMb } : {}),
            tasksPerNode: 1,
            extraArgs: [],
          },
          retryDelay: x.retryDelay,
          killGrace: x.killGrace,
          cwd: '/work/dir',
          argv: x.argv,
        };
      }),
  );

test('fromWire(toWire(spec)) is the spec, for every pool launch', () => {
  fc.assert(
    fc.property(spec, (s) => {
      assert.deepEqual(fromWire(JSON.parse(JSON.stringify(toWire(s)))), s);
    }),
  );
});

test('the controller refuses what the CLI would: --num-jobs without a command, a relative jobfile', () => {
  const wire = toWire({
    backend: 'pool:p',
    jobname: 'J',
    request: { tasksPerNode: 1, extraArgs: [] },
    retryDelay: 1,
    killGrace: 5,
    cwd: '/w',
    argv: [],
  });
  assert.throws(() => fromWire({ ...wire, num_jobs: 3 }), /--num-jobs needs --command CMD/);
  assert.throws(
    () => fromWire({ ...wire, jobfile: 'jobs.json' }),
    /jobfile 'jobs.json' must be an absolute path/,
  );
  assert.throws(() => fromWire({ ...wire, signal: 'KILL@1m' }), /SIGKILL cannot be caught/);
});
