import assert from 'node:assert/strict';
import { test } from 'node:test';
import { droverJson, runDrover, startDrover } from '../helpers/drover.js';
import { tempWorkspace } from '../helpers/workspace.js';

/** `drover watch` stops watching on Ctrl-C and leaves the launch running (the scenarios of every backend are in test/conformance/scenarios/watch.ts). */

interface Status {
  counts: Record<string, number>;
}

test('Ctrl-C stops watching (exit 130) and the launch runs on to its end', async (t) => {
  const cwd = tempWorkspace(t);
  const pre = await runDrover(['prelaunch', '+command', 'sleep', '+pos-arg', '2', '+jobname', 'S', '+q'], {
    cwd,
  });
  assert.equal(pre.code, 0, pre.stderr);
  const l = await runDrover(['launch', 'S', '--detach', '-q'], { cwd });
  assert.equal(l.code, 0, l.stderr);
  const w = startDrover(['watch', 'S'], { cwd });
  await new Promise((r) => setTimeout(r, 700));
  w.child.kill('SIGINT');
  const r = await w.result;
  assert.equal(r.code, 130, r.stderr);
  assert.match(r.stderr, /stopped watching; launch 1 runs on/);
  const during = await droverJson<Status>(['status', 'S', '--json'], { cwd });
  assert.equal(during.counts.running, 1, 'the task still runs');
  const after = await runDrover(['watch', 'S', '-q'], { cwd });
  assert.equal(after.code, 0, after.stderr);
  assert.match(after.stdout, /succeeded +1/);
});
