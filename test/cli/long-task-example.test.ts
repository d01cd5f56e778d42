/**
 * The runnable example of docs/long-tasks.md (examples/long-task/train.py) does what the page says: warned by
 * --signal, it saves and exits 75, is requeued with DROVER_RESUME=1, resumes from its step and succeeds; and
 * `logs --follow` follows it through its requeues, saying each one is a requeue.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { repoRoot, runDrover } from '../helpers/drover.js';
import { PYTHON3 } from '../helpers/python.js';
import { tempWorkspace } from '../helpers/workspace.js';

test('examples/long-task/train.py checkpoints at each warning, is requeued, resumes and succeeds', async (t) => {
  const cwd = tempWorkspace(t);
  fs.copyFileSync(path.join(repoRoot, 'examples', 'long-task', 'train.py'), path.join(cwd, 'train.py'));
  const l = await runDrover(
    [
      ...['launch', '--command', `${PYTHON3} train.py`, '--jobname', 'long', '--detach', '-q'],
      ...['--task-timeout', '6', '--signal', 'USR1@3', '--requeue', '5', '--kill-grace', '1'],
    ],
    { cwd },
  );
  assert.equal(l.code, 0, l.stderr);
  const f = await runDrover(['logs', 'long', '1', '--follow'], { cwd });
  assert.equal(f.code, 0, f.stderr);
  // Ten one-second steps, warned 3 s into each 6 s attempt: saved a few steps at a time, then done.
  const steps = [...f.stdout.matchAll(/attempt (\d+): from step (\d+)/g)].map((m) => Number(m[2]));
  assert.ok(steps.length >= 3, f.stdout);
  assert.equal(steps[0], 0);
  for (let i = 1; i < steps.length; i++) assert.ok(steps[i]! > steps[i - 1]!, `resumed further: ${steps}`);
  assert.match(f.stdout, /done: 10 steps\n$/);
  assert.match(f.stderr, /task 1 attempt 2 started \(a requeue\)/);
  const s = JSON.parse((await runDrover(['status', 'long', '--json'], { cwd })).stdout);
  assert.equal(s.counts.succeeded, 1);
  assert.equal(s.requeues, steps.length - 1);
});
