import assert from 'node:assert/strict';
import { test } from 'node:test';
import { condenseIds } from '../../src/tasklist/tasklist.js';
import { counts, list, status } from '../helpers/contract.js';
import { runDrover } from '../helpers/drover.js';
import { tempWorkspace, writeScript } from '../helpers/workspace.js';

// Exit codes of the 50 tasks, in task order: 14 of them fail on their first attempt.
const CODES = Array.from({ length: 50 }, (_, i) => [0, 0, 3, 0, 1, 0, 0, 2, 0, 0, 0, 255][i % 12]!);
const failing = CODES.flatMap((c, i) => (c !== 0 ? [i + 1] : []));

test('a 50-task sweep with failures: exit 1, exact counts, then --failed reruns exactly the failed tasks', async (t) => {
  const cwd = tempWorkspace(t);
  // Exits with the code given on the first attempt of the task, 0 on later ones.
  writeScript(cwd, 'exit.sh', 'if [ "$DROVER_ATTEMPT" -gt 1 ]; then exit 0; fi\nexit "$1"\n');
  const pre = await runDrover(
    ['prelaunch', '+command', 'sh exit.sh', '+jobname', 'J', '+pos-arg', ...CODES.map(String), '+q'],
    { cwd },
  );
  assert.equal(pre.code, 0, pre.stderr);

  const first = await runDrover(['launch', '--jobname', 'J', '--max-tasks', '4', '-q'], { cwd });
  assert.equal(first.code, 1, `a launch with failed tasks exits 1\n${first.stderr}`);

  const s1 = await status('J', { cwd });
  assert.equal(s1.jobname, 'J');
  assert.equal(s1.tasks, 50);
  assert.deepEqual(s1.counts, counts({ succeeded: 50 - failing.length, failed: failing.length }));
  assert.equal(s1.launches.length, 1);
  const l1 = s1.launches[0]!;
  assert.equal(typeof l1.id, 'string');
  assert.equal(l1.backend, 'local');
  assert.equal(l1.tasklist, '1-50');
  assert.deepEqual(l1.counts, counts({ succeeded: 50 - failing.length, failed: failing.length }));

  const tasks1 = await list('J', { cwd });
  assert.deepEqual(
    tasks1.map((x) => [x.task, x.command, x.state, x.exit_code, x.attempts]),
    CODES.map((c, i) => [i + 1, `sh exit.sh ${c}`, c === 0 ? 'succeeded' : 'failed', c, 1]),
  );

  const rerun = await runDrover(['launch', '--jobname', 'J', '--failed', '-q'], { cwd });
  assert.equal(rerun.code, 0, rerun.stderr);

  const s2 = await status('J', { cwd });
  assert.deepEqual(s2.counts, counts({ succeeded: 50 }));
  assert.equal(s2.launches.length, 2);
  assert.equal(s2.launches[1]!.tasklist, condenseIds(failing));
  assert.deepEqual(s2.launches[1]!.counts, counts({ succeeded: failing.length }));
  // The first launch keeps what happened in it.
  assert.deepEqual(s2.launches[0]!.counts, l1.counts);

  const tasks2 = await list('J', { cwd });
  assert.deepEqual(
    tasks2.map((x) => [x.task, x.state, x.exit_code, x.attempts]),
    CODES.map((c, i) => [i + 1, 'succeeded', 0, c === 0 ? 1 : 2]),
  );

  // Nothing failed is left: a further --failed launches nothing and records no launch.
  const again = await runDrover(['launch', '--jobname', 'J', '--failed', '-q'], { cwd });
  assert.equal(again.code, 0, again.stderr);
  assert.equal((await status('J', { cwd })).launches.length, 2);
});
