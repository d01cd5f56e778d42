import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { counts, status } from '../../helpers/contract.js';
import { lines, runDrover } from '../../helpers/drover.js';
import { tempWorkspace } from '../../helpers/workspace.js';
import { fakeCalls, fakeGridEngine } from './fake.js';

test('a refused later qsub deletes the arrays already submitted and records no launch', async (t) => {
  const cwd = tempWorkspace(t);
  // A FAKE Grid Engine: max_aj_tasks 2 makes three tasks two submissions, and the second is refused.
  const fake = fakeGridEngine(cwd, { maxAjTasks: 2, acceptQsubs: 1 });
  const pre = await runDrover(
    ['prelaunch', '+command', 'echo', '+jobname', 'R', '+pos-arg', 'a', 'b', 'c', 'd', '+q'],
    { cwd },
  );
  assert.equal(pre.code, 0, pre.stderr);
  const r = await runDrover(['launch', '--backend', 'gridengine', '--jobname', 'R', '--tasklist', '1-2,4'], {
    cwd,
    env: fake.env,
  });
  assert.equal(r.code, 2, r.stderr);
  assert.equal(lines(r.stderr).length, 1, r.stderr);
  assert.match(r.stderr, /Grid Engine refused the submission: .*the fake refuses this one/);
  const calls = fakeCalls(fake);
  assert.deepEqual(
    calls.map((c) => (c[0] === 'qsub' ? ['qsub', ...c.slice(-3)] : c)),
    [
      ['qconf', '-sconf'],
      ['qsub', '1-2:1', path.join(cwd, '.drover/jobs/R/launches/1/element.sh'), '0'],
      ['qsub', '1-1:1', path.join(cwd, '.drover/jobs/R/launches/1/element.sh'), '2'],
      ['qdel', '4242'],
    ],
  );
  const s = await status('R', { cwd, env: fake.env });
  assert.deepEqual(s.counts, counts({ pending: 4 }));
  assert.deepEqual(s.launches, []);
  assert.deepEqual(fs.readdirSync(path.join(cwd, '.drover', 'jobs', 'R', 'launches')), []);
  const history = await runDrover(['history', '--launch', '--json'], { cwd, env: fake.env });
  assert.equal(history.code, 0, history.stderr);
  assert.deepEqual(JSON.parse(history.stdout), [], 'the refused launch left no history entry');
});
