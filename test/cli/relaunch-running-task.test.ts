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

test('launching a task that another launch is running is refused, and the task runs once', async (t) => {
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

  // The first launch made the task queued in its transaction: the second is refused, never a second run.
  assert.equal(r.code, 2, `the second launch is refused: ${r.stderr}`);
  assert.equal(lines(r.stderr).length, 1, r.stderr);
  assert.match(r.stderr, /already queued or running/);
  assert.equal(started().length, 1, 'the task ran once');
  const [task] = await list('W', { cwd });
  assert.deepEqual([task!.state, task!.attempts], ['succeeded', 1]);
  const s = await status('W', { cwd });
  assert.deepEqual(
    s.launches.map((l) => l.counts.succeeded),
    [1],
    'one launch, one success',
  );
});
