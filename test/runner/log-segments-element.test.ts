import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import { placeOf } from '../../src/protocol/log-slices.js';
import { PYTHON3 } from '../helpers/python.js';
import { assertOwnSlice, slice, type TaskSpec, taskSpec, WRITER } from '../helpers/segments.js';
import { tempWorkspace } from '../helpers/workspace.js';
import { type Rec, runWith } from './runner-harness.js';
import { RUNNERS } from './runners.js';

/**
 * `--logs segments` on a cluster (issue 14 §3, "each packed element's"): a packed element run by the Python element
 * runner writes its slots' segments as the local runner's process starters do — every attempt's slice is exactly
 * what it wrote, a few files per slot — and the bash element runner, which cannot, keeps a file per attempt, said
 * in its records. Run as Slurm runs the element (runners.ts), without a scheduler.
 */

const python = RUNNERS.find((r) => r.name === 'python element runner, packed')!;
const bash = RUNNERS.find((r) => r.name === 'bash element runner, packed')!;

/** Each attempt's start and end records, by task. */
function attempts(raw: Rec[]): Map<number, { start: Rec; end: Rec }> {
  const m = new Map<number, { start: Rec; end: Rec }>();
  for (const r of raw) {
    if (r.type === 'start') m.set(r.task as number, { start: r, end: {} });
    if (r.type === 'end') m.get(r.task as number)!.end = r;
  }
  return m;
}

/** Run `specs` as one packed element with `slots` slots and --logs segments; its records and launch. */
async function runSpecs(
  t: Parameters<typeof runWith>[0],
  impl: typeof python,
  specs: TaskSpec[],
  slots: number,
) {
  const writer = path.join(tempWorkspace(t), 'w.py');
  fs.writeFileSync(writer, WRITER);
  const o = await runWith(t, impl, {
    commands: specs.map((s) => `${PYTHON3} ${writer} '${JSON.stringify(s)}'`),
    settings: { logs: 'segments', maxTasks: slots },
  });
  return { o, got: attempts(o.raw) };
}

test('segments from a packed Python element: each attempt is exactly what it wrote, in a few files per slot', {
  skip: python.skip,
}, async (t) => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(taskSpec, { minLength: 1, maxLength: 8 }),
      fc.integer({ min: 1, max: 3 }),
      async (specs, slots) => {
        const { o, got } = await runSpecs(t, python, specs, slots);
        assert.equal(got.size, specs.length, 'every task ran once');
        for (const [task, { start, end }] of got) {
          assert.equal(
            typeof start.out_off,
            'number',
            `task ${task}: its start says where its output begins`,
          );
          assert.equal(typeof end.out_end, 'number', `task ${task}: its end says where its output ends`);
          const row = {
            stdout_path: start.out as string,
            stderr_path: start.err as string,
            stdout_off: start.out_off as number,
            stderr_off: start.err_off as number,
            stdout_end: end.out_end as number,
            stderr_end: end.err_end as number,
            log_seq: start.seq as number,
          };
          for (const stream of ['out', 'err'] as const) {
            const expected = fs.readFileSync(path.join(o.launch.dir, 'expect', `${task}.1.${stream}`));
            assertOwnSlice(slice(placeOf(row, stream), stream), expected, {
              task,
              attempt: 1,
              stream,
              late: specs[task - 1]!.late,
            });
          }
        }
        const logs = fs.readdirSync(o.launch.settings.logDir);
        assert.ok(
          !logs.some((f) => /^\d+\.\d+\.(out|err)$/.test(f)),
          `no file per attempt: ${logs.join(' ')}`,
        );
        assert.ok(logs.length <= 3 * slots, `${logs.length} log files for ${slots} slot(s)`);
      },
    ),
    { numRuns: 5 },
  );
});

test('the bash element runner keeps a file per attempt under --logs segments, and its records say so', async (t) => {
  const specs: TaskSpec[] = [
    { chunks: [['out', 5, 0]], late: false, exit: 0 },
    { chunks: [['err', 70_001, 0]], late: false, exit: 1 },
  ];
  const { o, got } = await runSpecs(t, bash, specs, 2);
  for (const [task, { start, end }] of got) {
    assert.equal(start.out, path.join(o.launch.settings.logDir, `${task}.1.out`));
    assert.equal(start.out_off, undefined);
    assert.equal(end.out_end, undefined);
    for (const stream of ['out', 'err'] as const)
      assert.ok(
        fs
          .readFileSync(String(stream === 'out' ? start.out : start.err))
          .equals(fs.readFileSync(path.join(o.launch.dir, 'expect', `${task}.1.${stream}`))),
      );
  }
});
