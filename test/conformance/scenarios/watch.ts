import assert from 'node:assert/strict';
import { counts } from '../../helpers/contract.js';
import { drover, launch, prelaunch, script, status } from '../drive.js';
import { type Scenario, usual } from '../scenario.js';

/**
 * `drover watch J` (issue 13 §3) re-attaches to a launch that runs in the background — detached locally, on a
 * pool, on Slurm or Grid Engine — and stays until it has ended, printing each task that did not succeed as it
 * learns of it and the launch's summary at the end; its exit code is a foreground launch's: 1 when a task did
 * not succeed, 0 when all did.
 */

const TASK = 'sleep 1\n[ "$1" = ok ] || { echo "no good" >&2; exit 3; }\n';

export const watch: Scenario = {
  name: 'drover watch follows a background launch to its end, with the exit code of a foreground launch',
  timeoutMs: (b) => usual(b) * 2,
  async run(_b, site) {
    script(site, 'task.sh', TASK);
    await prelaunch(site, 'W', 'sh task.sh', ['ok', 'bad', 'ok']);
    const l = await launch(site, 'W');
    assert.equal(l.tasks, 3);
    const w = await drover(site, ['watch', 'W']);
    assert.equal(w.code, 1, `a task failed: exit 1\n${w.stderr}`);
    assert.match(
      w.stderr,
      /task 2 \(pos1=bad\) attempt 1 failed: exit 3 after \S+ — (stderr: \S+|drover logs W 2 --err)\n/,
    );
    assert.match(w.stdout, /succeeded +2/);
    assert.match(w.stdout, /failed +1/);
    // It returned because the launch ended, not before: the record says so.
    assert.deepEqual((await status(site, 'W')).counts, counts({ succeeded: 2, failed: 1 }));
    // The same launch again: over at once, same answer; a rerun of the failed task, all well: exit 0.
    const again = await drover(site, ['watch', 'W', '--launch', l.launch!, '-q']);
    assert.equal(again.code, 1, again.stderr);
    script(site, 'task.sh', 'sleep 1\n');
    const rerun = await launch(site, 'W', ['--failed']);
    assert.equal(rerun.tasks, 1);
    const ok = await drover(site, ['watch', 'W']);
    assert.equal(ok.code, 0, ok.stderr);
    assert.doesNotMatch(ok.stderr, /failed:/);
    assert.deepEqual((await status(site, 'W')).counts, counts({ succeeded: 3 }));
    // launch --follow: the same view from the launch itself, on every backend; with --json its JSON alone.
    script(site, 'task.sh', TASK);
    await prelaunch(site, 'W2', 'sh task.sh', ['ok', 'bad']);
    const f = await drover(site, ['launch', ...site.launch, ...site.background, 'W2', '--follow', '--json']);
    assert.equal(f.code, 1, f.stderr);
    assert.equal((JSON.parse(f.stdout) as { tasks: number }).tasks, 2);
    assert.deepEqual((await status(site, 'W2')).counts, counts({ succeeded: 1, failed: 1 }));
    // Bad input: one line, exit 2.
    const none = await drover(site, ['watch', 'W', '--launch', '99']);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /^drover: --launch 99: job 'W' has no such launch/);
    const nojob = await drover(site, ['watch', 'nosuch']);
    assert.equal(nojob.code, 2, nojob.stderr);
  },
};
