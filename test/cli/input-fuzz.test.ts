import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { lines, runDrover } from '../helpers/drover.js';
import { runMeasured } from '../helpers/measure.js';
import { tempWorkspace } from '../helpers/workspace.js';

/**
 * Issue 9 §6: random tasklists, job names, numbers, sizes and durations, plausible and hostile, given to every
 * command and option that takes them, end in exit 0 or exit 2 with one line on stderr: never another code, a
 * stack trace, a hang or a process that grows. Each run is a real drover process; the runs are bounded (75 runs,
 * about 30 s) and fast-check prints the seed and the smallest failing input to replay one.
 */

/** Values no parser should choke on: the classic troublemakers, and random text and numbers. */
const hostile = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    ' 7',
    '7 ',
    '-1',
    '-0',
    '+5',
    '1e3',
    '1E3',
    '0x10',
    '0b11',
    'NaN',
    'Infinity',
    '٣',
    '５',
    '१२',
    '1_000',
    '1,000',
    '2.5',
    '.5',
    '5.',
    '007',
    '0000000000000000000001',
    '9007199254740993',
    '18446744073709551617',
    '99999999999999999999',
    '9'.repeat(400),
    '1-',
    '--5',
    '1\n2',
    '\t',
    '💥',
    'x'.repeat(5000),
  ),
  fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }).map(String),
  fc.double().map(String),
  fc.string({ maxLength: 20 }),
  fc.string({ unit: 'grapheme', maxLength: 8 }),
);

const count = fc.oneof(
  fc.integer({ min: -3, max: 40 }).map(String),
  fc.constantFrom('10000000', '10000001', '100000', '100001', '1024', '1025', '65535', '65536', '5000000000'),
);
const size = fc
  .tuple(
    fc.oneof(fc.nat(5000).map(String), fc.constantFrom('0', '1.5', '0.5', '1048576', '1e3', '-5')),
    fc.constantFrom('', 'K', 'M', 'G', 'T', 'P', 'GB', 'GiB', 'mb', 'b', 'Q', ' G'),
  )
  .map(([n, u]) => `${n}${u}`);
const clock = fc.integer({ min: 0, max: 99 }).map((n) => String(n).padStart(2, '0'));
const duration = fc.oneof(
  fc
    .tuple(
      fc.oneof(fc.nat(1000).map(String), fc.constantFrom('0.5', '1.5', '0.0001', '400')),
      fc.constantFrom('', 's', 'm', 'h', 'd', 'w', 'M'),
    )
    .map(([n, u]) => `${n}${u}`),
  fc.tuple(clock, clock, clock).map(([h, m, s]) => `${h}:${m}:${s}`),
  fc.tuple(fc.nat(400), clock, clock).map(([d, h, m]) => `${d}-${h}:${m}`),
  fc.tuple(clock, clock).map(([m, s]) => `${m}:${s}`),
);
const block = fc
  .tuple(fc.integer({ min: 0, max: 9 }), fc.integer({ min: -2, max: 12 }), fc.integer({ min: -1, max: 4 }))
  .map(([a, len, step]) => (len < 0 ? `${a}` : `${a}-${a + len}${step === 1 ? '' : `:${step}`}`));
const tasklist = fc.oneof(
  fc.array(block, { minLength: 1, maxLength: 4 }).map((b) => b.join(',')),
  fc.constantFrom(
    '1-1000000000',
    '1-20000000',
    '1-99999999999999:7',
    '5,1-9007199254740993',
    '1-5,,3',
    '5-1',
  ),
);
const jobname = fc.oneof(
  fc.constantFrom('j', 'J', 'nope', 'j.x', '-j', '.j', 'a..b', 'a/b', 'é'),
  fc.stringMatching(/^[A-Za-z0-9_.+-]{1,12}$/),
);

/** The kinds of input, each plausible or hostile. */
const kinds = {
  count: fc.oneof(count, hostile),
  size: fc.oneof(size, hostile),
  duration: fc.oneof(duration, hostile),
  tasklist: fc.oneof(tasklist, hostile),
  jobname: fc.oneof(jobname, hostile),
} as const;
type Kind = keyof typeof kinds;

/**
 * The documented grammar of each kind (docs/cli.md), written out independently of drover's parsers: a value
 * outside it must be refused (exit 2), wherever it is given. Ranges are checked by the examples' tests.
 */
const GRAMMAR: Record<Kind, RegExp> = {
  count: /^\s*[0-9]+\s*$/,
  size: /^\s*[0-9]+(\.[0-9]+)?([KMGTP](i?B)?)?\s*$/i,
  duration: /^\s*([0-9]+(\.[0-9]+)?[smhd]?|[0-9]+(:[0-9]+){1,2}|[0-9]+-[0-9]+(:[0-9]+){0,2})\s*$/,
  tasklist: /^\s*[0-9]+(-[0-9]+(:[0-9]+)?)?\s*(,\s*[0-9]+(-[0-9]+(:[0-9]+)?)?\s*)*$/,
  jobname: /^(?!.*\.\.)[A-Za-z0-9_][A-Za-z0-9_.+-]{0,127}$/,
};

/** Every place a user types one of them: the command line with the value in it. */
const SITES: [Kind, (v: string) => string[]][] = [
  ['tasklist', (v) => ['launch', '--jobname', 'j', '--tasklist', v, '--dry-run']],
  ['tasklist', (v) => ['launch', '--jobname', 'j', '--backend', 'slurm', '--tasklist', v, '--dry-run']],
  ['tasklist', (v) => ['list', 'j', '--tasklist', v]],
  ['tasklist', (v) => ['list', '--jobname', 'j', '--tasklist', v, '--json']],
  ['tasklist', (v) => ['cancel', 'j', '--tasklist', v, '--yes', '--wait', '0']],
  ['tasklist', (v) => ['launch', '--pool', 'p', '--jobname', 'j', '--tasklist', v]],
  ['jobname', (v) => ['status', v]],
  ['jobname', (v) => ['status', v, '--json']],
  ['jobname', (v) => ['list', v]],
  ['jobname', (v) => ['logs', v, '1']],
  ['jobname', (v) => ['cancel', v, '--yes']],
  ['jobname', (v) => ['launch', '--jobname', v, '--dry-run']],
  ['count', (v) => ['logs', 'j', v]],
  ['count', (v) => ['logs', 'j', '1', '--attempt', v]],
  ['count', (v) => ['history', '-n', v]],
  ['count', (v) => ['launch', '--jobname', 'j', '--max-tasks', v, '--dry-run']],
  ['count', (v) => ['launch', '--jobname', 'j', '--cpus', v, '--dry-run']],
  ['count', (v) => ['launch', '--jobname', 'j', '--gpus', v, '--dry-run']],
  ['count', (v) => ['launch', '--jobname', 'j', '--retries', v, '--dry-run']],
  ['count', (v) => ['launch', '--jobname', 'j', '--backend', 'slurm', '--tasks-per-node', v, '--dry-run']],
  [
    'count',
    (v) => [
      'launch',
      '--jobname',
      'j',
      '--backend',
      'gridengine',
      '--tasks-per-node',
      '2',
      '--max-tasks-per-node',
      v,
      '--dry-run',
    ],
  ],
  ['count', (v) => ['launch', '--pool', 'p', '--command', 'true', '--num-jobs', v]],
  ['count', (v) => ['pool', 'create', 'p', '--workers', v]],
  ['count', (v) => ['pool', 'create', 'p', '--workers', '1', '--slots', v]],
  ['count', (v) => ['pool', 'scale', 'p', '--workers', v]],
  ['count', (v) => ['pool', 'create', 'p', '--backend', 'slurm', '--auto', '--max-workers', v]],
  ['count', (v) => ['pool', 'create', 'p', '--backend', 'slurm', '--auto', '--min-workers', v]],
  ['count', (v) => ['pool', 'create', 'p', '--backend', 'gridengine', '--auto', '--backlog', v]],
  ['count', (v) => ['worker', '--pool', 'p', '--cpus', v]],
  ['count', (v) => ['config', '--write', 'local', 'max_tasks', v]],
  ['size', (v) => ['launch', '--jobname', 'j', '--mem', v, '--dry-run']],
  ['size', (v) => ['launch', '--jobname', 'j', '--backend', 'slurm', '--mem', v, '--dry-run']],
  ['size', (v) => ['launch', '--jobname', 'j', '--backend', 'gridengine', '--mem', v, '--dry-run']],
  ['size', (v) => ['pool', 'create', 'p', '--workers', '1', '--mem', v]],
  ['size', (v) => ['launch', '--pool', 'p', '--jobname', 'j', '--mem', v]],
  ['size', (v) => ['worker', '--pool', 'p', '--mem', v]],
  ['duration', (v) => ['launch', '--jobname', 'j', '--duration', v, '--dry-run']],
  ['duration', (v) => ['launch', '--jobname', 'j', '--task-timeout', v, '--dry-run']],
  ['duration', (v) => ['launch', '--jobname', 'j', '--kill-grace', v, '--dry-run']],
  ['duration', (v) => ['launch', '--jobname', 'j', '--retry-delay', v, '--dry-run']],
  ['duration', (v) => ['launch', '--jobname', 'j', '--backend', 'slurm', '--duration', v, '--dry-run']],
  ['duration', (v) => ['launch', '--jobname', 'j', '--backend', 'gridengine', '--duration', v, '--dry-run']],
  ['duration', (v) => ['cancel', 'j', '--wait', v, '--yes']],
  ['duration', (v) => ['pool', 'create', 'p', '--workers', '1', '--duration', v]],
  ['duration', (v) => ['pool', 'create', 'p', '--backend', 'slurm', '--auto', '--idle-timeout', v]],
  ['duration', (v) => ['pool', 'create', 'p', '--backend', 'slurm', '--auto', '--time-limit', v]],
  ['duration', (v) => ['worker', '--pool', 'p', '--patience', v]],
];

/** Runs per `npm test` (about 0.3 s each); DROVER_FUZZ_RUNS=1000 digs deeper by hand. */
const RUNS = Number(process.env.DROVER_FUZZ_RUNS) || 75;

/** Arguments spawn can pass: no NUL byte. */
const passable = (v: string) => !v.includes('\0');

test('property: every command and option answers any value with exit 0 or one line and exit 2', async (t) => {
  const cwd = tempWorkspace(t);
  const pre = await runDrover(
    ['prelaunch', '+command', 'true', '+jobname', 'j', '+pos-arg', '1', '2', '3', '4', '5', '+q'],
    { cwd },
  );
  assert.equal(pre.code, 0, pre.stderr);
  assert.equal((await runDrover(['launch', '--jobname', 'j', '-q'], { cwd })).code, 0);
  assert.equal(
    (await runDrover(['config', '--write', 'gridengine', 'mem_resource', 'h_vmem'], { cwd })).code,
    0,
  );

  const sample = fc
    .integer({ min: 0, max: SITES.length - 1 })
    .chain((i) => kinds[SITES[i]![0]].filter(passable).map((v) => ({ site: i, value: v })));
  await fc.assert(
    fc.asyncProperty(sample, async ({ site, value }) => {
      const args = SITES[site]![1](value);
      const r = await runMeasured(args, { cwd, guardMs: 15_000 });
      const what = `drover ${args.map((a) => JSON.stringify(a)).join(' ')}`;
      assert.equal(r.hung, false, `${what} hung`);
      assert.ok(r.code === 0 || r.code === 2, `${what} exited ${r.code}:\n${r.stderr}`);
      assert.doesNotMatch(r.stderr, /^\s+at |Error:|RangeError|TypeError|FATAL/m, `${what}: a stack trace`);
      const kind = SITES[site]![0];
      // `config --write B KEY ''` removes the key (documented): the one empty value that is taken.
      const removesKey = args[0] === 'config' && value === '';
      if (!GRAMMAR[kind].test(value) && !removesKey)
        assert.equal(r.code, 2, `${what}: a ${kind} outside the grammar was taken`);
      if (r.code === 2) {
        assert.equal(lines(r.stderr).length, 1, `${what}: one line on stderr, got:\n${r.stderr}`);
        assert.match(r.stderr, /^drover: /);
      }
      assert.ok(r.peakMib < 200, `${what}: peak memory ${r.peakMib.toFixed(0)} MiB`);
    }),
    { numRuns: RUNS, endOnFailure: true },
  );
});
