import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { list, status } from '../helpers/contract.js';
import { droverJson, lines, startDrover } from '../helpers/drover.js';
import { isAlive, tempWorkspace, waitFor, writeScript } from '../helpers/workspace.js';

// Task 1 notes each start, then waits for the file `go` (at most ~30 s).
const SCRIPT =
  'echo "$DROVER_LAUNCH $DROVER_ATTEMPT" >> started.txt\ni=0\nwhile [ ! -f go ]; do i=$((i + 1)); [ $i -gt 600 ] && exit 9; sleep 0.05; done\n';

test('launching a task that another launch is running either is refused or records two separate attempts', async (t) => {
  const cwd = tempWorkspace(t);
  writeScript(cwd, 'wait.sh', SCRIPT);
  const first = await droverJson<{ pid: number }>(
    ['launch', '--command', 'sh wait.sh', '--jobname', 'W', '--detach', '--json'],
    { cwd },
  );
  // At once, before anything has looked at the first launch's records.
  const second = startDrover(['launch', '--jobname', 'W', '--tasklist', '1', '-q'], { cwd });
  const started = () =>
    fs.existsSync(path.join(cwd, 'started.txt'))
      ? lines(fs.readFileSync(path.join(cwd, 'started.txt'), 'utf8'))
      : [];
  let secondEnded = false;
  void second.result.then(() => {
    secondEnded = true;
  });
  await waitFor(
    'both launches to start the task, or the second to end',
    () => started().length >= 2 || secondEnded,
  );
  fs.writeFileSync(path.join(cwd, 'go'), '');
  const r = await second.result;
  await waitFor('the first runner to end', () => !isAlive(first.pid));

  const runs = started();
  const [task] = await list('W', { cwd });
  if (r.code === 2) {
    assert.equal(lines(r.stderr).length, 1, r.stderr);
    assert.equal(runs.length, 1);
    assert.deepEqual([task!.state, task!.attempts], ['succeeded', 1]);
    return;
  }
  assert.equal(r.code, 0, `the second launch ran the task to success: ${r.stderr}`);
  assert.equal(runs.length, 2);
  assert.equal(
    new Set(runs.map((l) => l.split(' ')[1])).size,
    2,
    `distinct attempt numbers: ${runs.join(' / ')}`,
  );
  assert.deepEqual([task!.state, task!.attempts], ['succeeded', 2]);
  const s = await status('W', { cwd });
  assert.deepEqual(
    s.launches.map((l) => l.counts.succeeded),
    [1, 1],
    'each launch records its own success',
  );
});
