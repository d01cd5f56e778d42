import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { counts, status } from '../../helpers/contract.js';
import { lines, runDrover } from '../../helpers/drover.js';
import { tempWorkspace } from '../../helpers/workspace.js';

/**
 * A FAKE Grid Engine (named as such): a qsub that accepts the first submission and refuses the second, and a
 * qdel that notes what it was asked. A real cluster cannot be made to refuse the second of two identical
 * submissions on demand.
 */
function fakeGridEngine(dir: string): { bin: string; calls: string } {
  const bin = path.join(dir, 'fake-bin');
  const calls = path.join(dir, 'calls.log');
  fs.mkdirSync(bin);
  fs.writeFileSync(
    path.join(bin, 'qsub'),
    `#!/bin/sh
echo "qsub $*" >> '${calls}'
if [ -e '${calls}.first' ]; then echo 'Unable to run job: denied: the fake refuses this one' >&2; echo Exiting. >&2; exit 1; fi
touch '${calls}.first'
echo 4242.1-2:1
`,
    { mode: 0o755 },
  );
  fs.writeFileSync(path.join(bin, 'qdel'), `#!/bin/sh\necho "qdel $*" >> '${calls}'\n`, { mode: 0o755 });
  fs.writeFileSync(path.join(bin, 'qstat'), '#!/bin/sh\nexit 1\n', { mode: 0o755 });
  return { bin, calls };
}

test('a refused later qsub deletes the arrays already submitted and records no launch', async (t) => {
  const cwd = tempWorkspace(t);
  const fake = fakeGridEngine(cwd);
  const env = { PATH: `${fake.bin}:${process.env.PATH ?? ''}` };
  const pre = await runDrover(
    ['prelaunch', '+command', 'echo', '+jobname', 'R', '+pos-arg', 'a', 'b', 'c', 'd', '+q'],
    {
      cwd,
    },
  );
  assert.equal(pre.code, 0, pre.stderr);
  const r = await runDrover(['launch', '--backend', 'gridengine', '--jobname', 'R', '--tasklist', '1-2,4'], {
    cwd,
    env,
  });
  assert.equal(r.code, 2, r.stderr);
  assert.equal(lines(r.stderr).length, 1, r.stderr);
  assert.match(r.stderr, /Grid Engine refused the submission: .*the fake refuses this one/);
  const calls = lines(fs.readFileSync(fake.calls, 'utf8'));
  assert.equal(calls.length, 3);
  assert.match(calls[0]!, /^qsub .* -t 1-2:1 /);
  assert.match(calls[1]!, /^qsub .* -t 4-4:1 /);
  assert.equal(calls[2], 'qdel 4242');
  const s = await status('R', { cwd, env });
  assert.deepEqual(s.counts, counts({ pending: 4 }));
  assert.deepEqual(s.launches, []);
  assert.deepEqual(fs.readdirSync(path.join(cwd, '.drover', 'jobs', 'R', 'launches')), []);
  const history = await runDrover(['history', '--launch', '--json'], { cwd, env });
  assert.equal(history.code, 0, history.stderr);
  assert.deepEqual(JSON.parse(history.stdout), [], 'the refused launch left no history entry');
});
