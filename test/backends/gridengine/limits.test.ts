import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { droverJson, runDrover } from '../../helpers/drover.js';
import { tempWorkspace } from '../../helpers/workspace.js';
import { fakeCalls, fakeGridEngine } from './fake.js';

/**
 * The cluster's max_aj_tasks decides how many qsub calls a launch makes, and `--dry-run` shows exactly them. A
 * real cluster's max_aj_tasks is global (changing it on a shared test cluster would disturb everyone), so these
 * run on a FAKE Grid Engine (./fake.ts); the one-qsub launches run on the real one in one-qsub.test.ts.
 */

interface DryRun {
  submissions: string[][];
  warnings: string[];
}

interface Launched {
  launch: string;
  handles: { arrays: { id: string; offset: number; range: string }[]; keys: string };
  warnings: string[];
}

async function job(cwd: string): Promise<void> {
  const values = Array.from({ length: 20 }, (_, i) => `v${i + 1}`);
  const pre = await runDrover(
    ['prelaunch', '+command', 'echo', '+jobname', 'L', '+pos-arg', ...values, '+q'],
    {
      cwd,
    },
  );
  assert.equal(pre.code, 0, pre.stderr);
}

const args = ['launch', '--backend', 'gridengine', '--jobname', 'L', '--tasklist', '1-3,7,9-12,20'];

test('past max_aj_tasks a launch is split into as few qsubs as needed, exactly those of its dry run', async (t) => {
  const cwd = tempWorkspace(t);
  const fake = fakeGridEngine(cwd, { maxAjTasks: 4 });
  await job(cwd);
  const dry = await droverJson<DryRun>([...args, '--max-tasks', '2', '--dry-run', '--json'], {
    cwd,
    env: fake.env,
  });
  assert.deepEqual(
    dry.submissions.map((c) => c.slice(-4)),
    [
      ['-t', '1-4:1', path.join(cwd, '.drover/jobs/L/launches/<N>/element.sh'), '0'],
      ['-t', '1-4:1', path.join(cwd, '.drover/jobs/L/launches/<N>/element.sh'), '4'],
      ['-t', '1-1:1', path.join(cwd, '.drover/jobs/L/launches/<N>/element.sh'), '8'],
    ],
  );
  assert.ok(dry.warnings.some((w) => /--max-tasks 2 applies to each of the 3 array jobs/.test(w)));
  assert.deepEqual(fakeCalls(fake), [['qconf', '-sconf']], 'a dry run asks the limit and submits nothing');
  const l = await droverJson<Launched>([...args, '--max-tasks', '2', '--json'], { cwd, env: fake.env });
  const ran = fakeCalls(fake).filter((c) => c[0] === 'qsub');
  assert.deepEqual(
    ran,
    dry.submissions.map((c) => c.map((a) => a.replaceAll('<N>', l.launch))),
    'the launch ran the qsub commands of its dry run',
  );
  assert.equal(fakeCalls(fake).filter((c) => c[0] === 'qconf').length, 2, 'one qconf per launch');
  assert.deepEqual(
    l.handles.arrays.map((a) => [a.id, a.offset, a.range]),
    [
      ['4242', 0, '1-4:1'],
      ['4243', 4, '1-4:1'],
      ['4244', 8, '1-1:1'],
    ],
  );
  assert.equal(l.handles.keys, 'index');
  const file = JSON.parse(
    fs.readFileSync(path.join(cwd, '.drover/jobs/L/launches/1/launch.json'), 'utf8'),
  ) as {
    groups: Record<string, { id: number }[]>;
  };
  assert.deepEqual(
    Object.entries(file.groups).map(([k, g]) => [Number(k), g.map((x) => x.id)]),
    [1, 2, 3, 7, 9, 10, 11, 12, 20].map((id, i) => [i + 1, [id]]),
    'launch.json maps element numbers 1..9 to the tasks',
  );
});

test('when qconf cannot be read: one warning, and arrays split as for the default 75000', async (t) => {
  const cwd = tempWorkspace(t);
  const fake = fakeGridEngine(cwd, { maxAjTasks: 'fail' });
  await job(cwd);
  const dry = await droverJson<DryRun>([...args, '--dry-run', '--json'], { cwd, env: fake.env });
  assert.deepEqual(
    dry.submissions.map((c) => c[c.indexOf('-t') + 1]),
    ['1-9:1'],
  );
  assert.equal(dry.warnings.length, 1, dry.warnings.join('\n'));
  assert.match(
    dry.warnings[0]!,
    /could not read the cluster's max_aj_tasks \(qconf -sconf: .*commlib error.*75000/,
  );
  const r = await runDrover(args, { cwd, env: fake.env });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /drover: warning: could not read the cluster's max_aj_tasks/);
  assert.deepEqual(
    fakeCalls(fake)
      .filter((c) => c[0] === 'qsub')
      .map((c) => c[c.indexOf('-t') + 1]),
    ['1-9:1'],
  );
});
