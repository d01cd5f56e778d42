import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { status } from '../helpers/contract.js';
import { droverJson, runDrover } from '../helpers/drover.js';
import { fakeScheduler } from '../helpers/fake-scheduler.js';
import { tempWorkspace } from '../helpers/workspace.js';

test('launch --dry-run lists the tasks it would run, runs none, and records only the history', async (t) => {
  const cwd = tempWorkspace(t);
  const pre = await runDrover(
    ['prelaunch', '+command', 'touch', '+jobname', 'D', '+pos-arg', 'a', 'b', 'c', 'd', '+q'],
    { cwd },
  );
  assert.equal(pre.code, 0, pre.stderr);
  const dry = await runDrover(['launch', '--jobname', 'D', '--tasklist', '2-4', '--dry-run'], { cwd });
  assert.equal(dry.code, 0, dry.stderr);
  assert.equal(dry.stdout, '2\ttouch b\n3\ttouch c\n4\ttouch d\n');
  assert.match(dry.stderr, /would launch 3 task\(s\) of job 'D' on local: tasklist 2-4/);
  const json = await droverJson<Record<string, unknown>>(
    ['launch', '--jobname', 'D', '--dry-run', '--json'],
    {
      cwd,
    },
  );
  assert.deepEqual(json, {
    jobname: 'D',
    launch: null,
    backend: 'local',
    dry_run: true,
    tasks: 4,
    tasklist: '1-4',
    submissions: [],
    warnings: [],
  });
  for (const f of ['a', 'b', 'c', 'd'])
    assert.equal(fs.existsSync(path.join(cwd, f)), false, `${f} was touched`);
  const s = await status('D', { cwd });
  assert.deepEqual(s.launches, []);
  assert.equal(s.counts.pending, 4);
  const h = await runDrover(['history', '--launch', '--full'], { cwd });
  assert.equal(h.code, 0, h.stderr);
  assert.equal((h.stdout.match(/--dry-run/g) ?? []).length, 2, h.stdout);
});

test('launch --dry-run refuses bad input as a launch would: one line, exit 2', async (t) => {
  const cwd = tempWorkspace(t);
  const pre = await runDrover(['prelaunch', '+command', 'true', '+jobname', 'D', '+pos-arg', '1', '+q'], {
    cwd,
  });
  assert.equal(pre.code, 0, pre.stderr);
  const bad = await runDrover(
    ['launch', '--jobname', 'D', '--backend', 'slurm', '--mem', 'lots', '--dry-run'],
    {
      cwd,
    },
  );
  assert.equal(bad.code, 2);
  assert.equal(bad.stderr.trim().split('\n').length, 1, bad.stderr);
  assert.match(bad.stderr, /lots/);
});

test('launch --dry-run on Slurm whose controller does not answer: one wait, one warning, the plan', async (t) => {
  const site = fakeScheduler(t, 'slurm');
  const cwd = tempWorkspace(t);
  const env = { ...site.env, DROVER_FAKE_FAULTS: 'scontrol:down' };
  const pre = await runDrover(
    ['prelaunch', '+command', 'true', '+jobname', 'D', '+pos-arg', '1', '2', '+q'],
    {
      cwd,
    },
  );
  assert.equal(pre.code, 0, pre.stderr);
  const dry = await runDrover(
    ['launch', '--jobname', 'D', '--backend', 'slurm', '--mem', '1G', '--duration', '5m', '--dry-run'],
    { cwd, env },
  );
  assert.equal(dry.code, 0, dry.stderr);
  const warnings = dry.stderr.split('\n').filter((l) => l.startsWith('drover: warning:'));
  assert.equal(warnings.length, 1, dry.stderr);
  assert.match(warnings[0]!, /MaxArraySize .*, and the nodes' resources were not checked$/);
  assert.match(dry.stderr, /sbatch --parsable --array=1-2 /);
  // Each client would wait out Slurm's MessageTimeout: the nodes are not asked after the configuration failed.
  assert.deepEqual(
    site.calls().map((c) => c.prog),
    ['scontrol'],
  );
  assert.equal(site.calls('sbatch').length, 0);
});
