import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { shellQuote } from '../../../src/backends/cluster/wrapper.js';
import { childEnv, droverBin, runDrover } from '../../helpers/drover.js';
import { fakeScheduler } from '../../helpers/fake-scheduler.js';
import { tempWorkspace } from '../../helpers/workspace.js';

/**
 * A cluster launch on a terminal returns as soon as its arrays are submitted and draws no progress bar: the tasks
 * run elsewhere, and a bar made for them (the local backend's) never moved and kept drover from exiting. Runs
 * `drover launch` under util-linux `script`, which gives it a terminal, against the FAKE schedulers.
 */

const hasScript = spawnSync('script', ['--version'], { encoding: 'utf8' }).status === 0;

for (const kind of ['slurm', 'gridengine'] as const) {
  test(`drover launch --backend ${kind} on a terminal returns at once, without a progress bar`, {
    skip: hasScript ? false : 'util-linux script is not installed',
    timeout: 60_000,
  }, async (t) => {
    const cwd = tempWorkspace(t);
    const fake = fakeScheduler(t, kind);
    const pre = await runDrover(
      ['prelaunch', '+command', 'true', '+jobname', 'J', '+pos-arg', '1', '2', '+q'],
      {
        cwd,
        env: fake.env,
      },
    );
    assert.equal(pre.code, 0, pre.stderr);
    const cmd = [process.execPath, droverBin, 'launch', '--backend', kind, '--jobname', 'J'].map(shellQuote);
    const t0 = Date.now();
    const r = spawnSync('script', ['-qec', cmd.join(' '), '/dev/null'], {
      cwd,
      env: childEnv(fake.env),
      encoding: 'utf8',
      timeout: 30_000,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    assert.equal(r.signal, null, `drover launch did not return within 30 s:\n${r.stdout}`);
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.ok(Date.now() - t0 < 15_000, `it took ${Date.now() - t0} ms`);
    assert.match(r.stdout, /submitted to (Slurm|Grid Engine)/);
    assert.doesNotMatch(r.stdout, /0\/2|ETA|\u001b\[\?25l/, 'no progress bar, no hidden cursor');
    // The elements run on after the launch returned and write into the launch's folder: let them end before the
    // folder is removed.
    const w = await runDrover(['watch', 'J', '-q'], { cwd, env: fake.env });
    assert.equal(w.code, 0, w.stderr);
  });
}
