import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { counts, list, status } from '../helpers/contract.js';
import { runDrover } from '../helpers/drover.js';
import { tempWorkspace, writeScript } from '../helpers/workspace.js';

test('--retries 2 --retry-delay 0: a failing task runs 3 attempts, DROVER_ATTEMPT 1..3, each with its own log', async (t) => {
  const cwd = tempWorkspace(t);
  writeScript(
    cwd,
    'fail.sh',
    'echo "$DROVER_ATTEMPT" >> attempts.txt\necho "attempt $DROVER_ATTEMPT"\nexit 4\n',
  );
  const r = await runDrover(
    ['launch', '--command', 'sh fail.sh', '--jobname', 'R', '--retries', '2', '--retry-delay', '0', '-q'],
    { cwd },
  );
  assert.equal(r.code, 1, r.stderr);
  assert.equal(fs.readFileSync(path.join(cwd, 'attempts.txt'), 'utf8'), '1\n2\n3\n');
  const [task] = await list('R', { cwd });
  assert.deepEqual([task!.state, task!.exit_code, task!.attempts], ['failed', 4, 3]);
  assert.deepEqual((await status('R', { cwd })).counts, counts({ failed: 1 }));
  for (const n of [1, 2, 3]) {
    const log = await runDrover(['logs', 'R', '1', '--attempt', String(n)], { cwd });
    assert.equal(log.code, 0, log.stderr);
    assert.equal(log.stdout, `attempt ${n}\n`);
  }
  const latest = await runDrover(['logs', 'R', '1'], { cwd });
  assert.equal(latest.stdout, 'attempt 3\n');
});

test('a task that succeeds on its second attempt ends succeeded with 2 attempts, and the launch exits 0', async (t) => {
  const cwd = tempWorkspace(t);
  const r = await runDrover(
    [
      'launch',
      '--command',
      'test "$DROVER_ATTEMPT" -ge 2',
      '--jobname',
      'R',
      '--retries',
      '2',
      '--retry-delay',
      '0',
      '-q',
    ],
    { cwd },
  );
  assert.equal(r.code, 0, r.stderr);
  const [task] = await list('R', { cwd });
  assert.deepEqual([task!.state, task!.exit_code, task!.attempts], ['succeeded', 0, 2]);
});

test('attempt numbers continue across launches: a rerun of a twice-tried task is attempt 3', async (t) => {
  const cwd = tempWorkspace(t);
  const first = await runDrover(
    ['launch', '--command', 'echo "$DROVER_ATTEMPT" >> a.txt; exit 1', '--jobname', 'R', '--retries', '1'],
    { cwd, env: {} },
  );
  assert.equal(first.code, 1, first.stderr);
  const again = await runDrover(['launch', '--jobname', 'R', '--failed', '-q', '--retry-delay', '0'], {
    cwd,
  });
  assert.equal(again.code, 1, again.stderr);
  assert.equal(fs.readFileSync(path.join(cwd, 'a.txt'), 'utf8'), '1\n2\n3\n');
  assert.equal((await list('R', { cwd }))[0]!.attempts, 3);
});
