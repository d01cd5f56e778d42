// Property: the streaming expansion (planSweep's batches, JobfileWriter, ParamsFileWriter) gives exactly the
// jobfile bytes, params file bytes and per-task params of the in-memory expansion prelaunch used before it
// (kept below as the reference: expandSweep, serializeJobfile and serializeParamsFile as of 177a5ac), on random
// sweeps with tags, positional args, flags, hydra mode, repeated and colliding names, and awkward values.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import { DroverError } from '../../src/errors.js';
import {
  JobfileWriter,
  ParamsFileWriter,
  planSweep,
  type SweepArg,
  type SweepSpec,
} from '../../src/sweep/index.js';
import { pythonJsonString } from '../../src/sweep/python-json.js';
import { tempWorkspace } from '../helpers/workspace.js';

interface RefTask {
  id: number;
  command: string;
  tag: string;
  params: Record<string, string>;
}

interface Row {
  command: string;
  suffix: string;
  params: Record<string, string>;
}

/** The reference: prelaunch's expansion before it streamed, every task an object in memory. */
function referenceExpand(spec: SweepSpec, startId: number): RefTask[] {
  const joiner = spec.argMode === 'hydra' ? '=' : ' ';
  const merged = new Map<string, string[]>();
  for (const { name, values } of spec.args) merged.set(name, values);
  const args = [...merged].map(([name, values]) => ({ name, values }));
  const tagArgs = new Set(spec.tagArgs ?? args.map((a) => a.name));
  const keyname = (n: string) =>
    n.replaceAll('_', '').replaceAll('-', '').replaceAll('=', '_').replaceAll('/', '.');
  const argKeys = args.filter((a) => a.values.length > 0).map((a) => a.name);
  const taken = new Set(argKeys);
  const pos = spec.posArgs.map((_, i) => {
    const key = `pos${i + 1}`;
    if (taken.has(key)) return undefined;
    taken.add(key);
    return key;
  });
  const own = new Set(spec.flags.filter((f) => !taken.has(f)));
  const order = [...pos.filter((k) => k !== undefined), ...argKeys, ...own];
  let rows: Row[] = [{ command: spec.command, suffix: '', params: {} }];
  spec.posArgs.forEach((values, i) => {
    const key = pos[i];
    rows = values.flatMap((v) =>
      rows.map((r) => ({
        command: `${r.command} ${v}`,
        suffix: `${r.suffix}__${v}`,
        params: key === undefined ? r.params : { ...r.params, [key]: v },
      })),
    );
  });
  for (const { name, values } of args) {
    const key = tagArgs.has(name) ? `__${keyname(name)}` : undefined;
    if (values.length === 0) {
      rows = rows.map((r) => ({ ...r, command: `${r.command} ${name}`, suffix: r.suffix + (key ?? '') }));
      continue;
    }
    rows = values.flatMap((v) =>
      rows.map((r) => ({
        command: `${r.command} ${name}${joiner}${v}`,
        suffix: key === undefined ? r.suffix : `${r.suffix}${key}_${v}`,
        params: { ...r.params, [name]: v },
      })),
    );
  }
  for (const flag of spec.flags) {
    const mark = flag.replaceAll('-', '').replaceAll('+', '');
    const mine = own.has(flag);
    const on = rows.map((r) => ({
      command: `${r.command} ${flag}`,
      suffix: `${r.suffix}__+${mark}`,
      params: mine ? { ...r.params, [flag]: 'true' } : r.params,
    }));
    const off = rows.map((r) => ({
      command: r.command,
      suffix: `${r.suffix}__-${mark}`,
      params: mine ? { ...r.params, [flag]: 'false' } : r.params,
    }));
    rows = [...on, ...off];
  }
  const width = String(startId + rows.length - 1).length;
  return rows.map((row, index) => {
    const id = startId + index;
    const params = Object.fromEntries(
      order.filter((k) => Object.hasOwn(row.params, k)).map((k) => [k, row.params[k]!]),
    );
    if (spec.tag === undefined) return { id, command: row.command, tag: '', params };
    const number = spec.noTagNumber ? '' : `_${String(id).padStart(width, '0')}`;
    const tag = spec.jobname + number + row.suffix;
    return { id, command: `${row.command} ${spec.tag}${joiner}${tag}`, tag, params };
  });
}

function referenceJobfile(tasks: readonly RefTask[]): string {
  const parts = tasks.map((t) => `"${t.id}": [${pythonJsonString(t.command)}, ${pythonJsonString(t.tag)}]`);
  return `{${parts.join(', ')}}`;
}

function referenceParamsFile(tasks: readonly RefTask[]): string {
  const lines = tasks.map((t) => `"${t.id}": ${JSON.stringify({ command: t.command, params: t.params })}`);
  return lines.length === 0 ? '{}\n' : `{\n${lines.join(',\n')}\n}\n`;
}

/** Values with what the encoders treat specially: quotes, backslashes, controls, non-ASCII, empty. */
const value = fc.oneof(
  fc.constantFrom(
    '1',
    '0.1',
    '',
    'a b',
    'x"y',
    'back\\slash',
    'tab\there',
    'new\nline',
    'é',
    '😀',
    '\u0007',
    '\ud800',
  ),
  fc.string({ maxLength: 4 }),
);
/** Names, some colliding on purpose: pos keys, integer-like keys, a flag that is also an +arg, __proto__. */
const name = fc.constantFrom(
  '--lr',
  '--seed',
  'lr',
  'a=b',
  'x/y',
  'pos1',
  'pos2',
  '5',
  '10',
  '__proto__',
  '--fast',
  'opt_name',
);
const flag = fc.constantFrom('--fast', '--slow', '+p', '-v', '--lr', 'pos1', '7');
const arg: fc.Arbitrary<SweepArg> = fc.record({ name, values: fc.array(value, { maxLength: 3 }) });

const spec: fc.Arbitrary<SweepSpec> = fc.record({
  command: fc.constantFrom('python train.py', 'run', ''),
  jobname: fc.constantFrom('j', 'exp-1', 'big_job'),
  argMode: fc.constantFrom('argparse' as const, 'hydra' as const),
  args: fc.array(arg, { maxLength: 4 }),
  posArgs: fc.array(fc.array(value, { minLength: 0, maxLength: 3 }), { maxLength: 2 }),
  flags: fc.array(flag, { maxLength: 2 }),
  tag: fc.option(fc.constantFrom('--tag', 'tag', '+t'), { nil: undefined }),
  tagArgs: fc.option(fc.array(name, { maxLength: 3 }), { nil: undefined }),
  noTagNumber: fc.boolean(),
});

test('streaming expansion = in-memory expansion: same jobfile bytes, params file bytes and params', (t) => {
  const dir = tempWorkspace(t);
  const startId = fc.oneof(
    fc.constant(1),
    fc.integer({ min: 1, max: 1200 }),
    fc.constantFrom(9, 10, 99, 100, 999),
  );
  fc.assert(
    fc.property(spec, startId, fc.integer({ min: 1, max: 50 }), (s, start, size) => {
      const ref = referenceExpand(s, start);
      const plan = planSweep(s, { startId: start });
      assert.equal(plan.count, ref.length);
      const jobfile = path.join(dir, 'jobs.json');
      const paramsFile = path.join(dir, 'params.json');
      const job = new JobfileWriter(jobfile);
      const params = new ParamsFileWriter(paramsFile);
      const got: RefTask[] = [];
      for (const b of plan.batches(size)) {
        assert.ok(b.ids.length > 0 && b.ids.length <= size);
        job.addBatch(b);
        params.addBatch(b);
        b.ids.forEach((id, i) => {
          got.push({ id, command: b.commands[i]!, tag: b.tags[i]!, params: JSON.parse(b.params[i]!) });
          // The ledger's params text is JSON.stringify of the task's params, as before.
          assert.equal(b.params[i], JSON.stringify(ref[got.length - 1]?.params));
        });
      }
      job.commit();
      params.commit();
      assert.deepEqual(got, ref);
      assert.equal(fs.readFileSync(jobfile, 'utf8'), referenceJobfile(ref));
      assert.equal(fs.readFileSync(paramsFile, 'utf8'), referenceParamsFile(ref));
    }),
    { numRuns: 400 },
  );
  assert.deepEqual(fs.readdirSync(dir).sort(), ['jobs.json', 'params.json'], 'no temporary file left');
});

test('a sweep too big for a job is refused before any task is made', () => {
  const values = Array.from({ length: 1000 }, (_, i) => String(i));
  const s: SweepSpec = {
    command: 'run',
    jobname: 'j',
    argMode: 'argparse',
    args: ['--a', '--b', '--c'].map((n) => ({ name: n, values })),
    posArgs: [],
    flags: [],
    noTagNumber: false,
  };
  const t0 = performance.now();
  assert.throws(
    () => planSweep(s),
    (err: unknown) =>
      err instanceof DroverError &&
      err.code === 'usage' &&
      /1\.00e\+9 tasks, more than a job may have \(10000000\)/.test(err.message),
  );
  assert.ok(performance.now() - t0 < 100);
  // Up to the limit is fine, and costs nothing until the tasks are asked for.
  assert.equal(planSweep({ ...s, args: s.args.slice(0, 2) }, { startId: 9_000_001 }).count, 1_000_000);
  assert.throws(
    () => planSweep({ ...s, args: s.args.slice(0, 2) }, { startId: 9_000_002 }),
    /after the job's ids up to 9000001/,
  );
});
