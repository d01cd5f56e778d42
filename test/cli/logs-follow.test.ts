import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { droverJson, runDrover, startDrover } from '../helpers/drover.js';
import { tempWorkspace, waitFor } from '../helpers/workspace.js';

/**
 * `drover logs J T --follow` (issue 13 §4): a task still queued is waited for, then followed; a task retried is
 * followed attempt after attempt until it ends; `--attempt` pins one. Launches are detached, as a user watching
 * a background launch has them.
 */

async function job(t: Parameters<typeof tempWorkspace>[0], script: string, args: string[]): Promise<string> {
  const cwd = tempWorkspace(t);
  fs.writeFileSync(path.join(cwd, 't.sh'), script);
  const r = await runDrover(
    ['prelaunch', '+command', 'sh t.sh', '+jobname', 'F', '+pos-arg', ...args, '+q'],
    {
      cwd,
    },
  );
  assert.equal(r.code, 0, r.stderr);
  return cwd;
}

async function settled(cwd: string): Promise<void> {
  await waitFor(
    'the launch to end',
    async () => {
      const s = await droverJson<{ counts: Record<string, number> }>(['status', 'F', '--json'], { cwd });
      return s.counts.queued === 0 && s.counts.running === 0;
    },
    30_000,
    200,
  );
}

test('logs --follow of a queued task waits for it to start, then prints all it writes', async (t) => {
  // Task 1 holds the only slot for a second; task 2 is queued behind it.
  const cwd = await job(
    t,
    'if [ "$1" = 1 ]; then sleep 1; fi\necho "out of $1"; sleep 0.3; echo "done $1"\n',
    ['1', '2'],
  );
  const l = await runDrover(['launch', 'F', '--max-tasks', '1', '--detach', '-q'], { cwd });
  assert.equal(l.code, 0, l.stderr);
  const r = await runDrover(['logs', 'F', '2', '--follow'], { cwd });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'out of 2\ndone 2\n');
  assert.match(r.stderr, /task 2 of 'F' is queued: waiting for it to start/);
  await settled(cwd);
  // Without --follow the same task prints what it wrote, and no waiting.
  const again = await runDrover(['logs', 'F', '2'], { cwd });
  assert.equal(again.stdout, 'out of 2\ndone 2\n');
  assert.equal(again.stderr, '');
});

test('logs --follow follows each retry in turn until the task ends; --attempt pins one', async (t) => {
  const cwd = await job(
    t,
    'echo "try $DROVER_ATTEMPT" >&2; sleep 0.2; [ "$DROVER_ATTEMPT" -ge 3 ] || exit 4\n',
    ['x'],
  );
  const follow = startDrover(['logs', 'F', '1', '--follow', '--err'], { cwd });
  // Started before the launch: the task is pending (never launched), so there is nothing to follow yet.
  const early = await follow.result;
  assert.equal(early.code, 2, early.stderr);
  assert.match(early.stderr, /task 1 of 'F' has no attempt yet/);
  const l = await runDrover(['launch', 'F', '--retries', '2', '--retry-delay', '0.3', '--detach', '-q'], {
    cwd,
  });
  assert.equal(l.code, 0, l.stderr);
  const r = await runDrover(['logs', 'F', '1', '--follow', '--err'], { cwd });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'try 1\ntry 2\ntry 3\n', 'every attempt, in order, each whole');
  assert.match(r.stderr, /attempt 2 started \(a retry\)/);
  assert.match(r.stderr, /attempt 3 started \(a retry\)/);
  await settled(cwd);
  const two = await runDrover(['logs', 'F', '1', '--follow', '--err', '--attempt', '2'], { cwd });
  assert.equal(two.code, 0, two.stderr);
  assert.equal(two.stdout, 'try 2\n');
});
