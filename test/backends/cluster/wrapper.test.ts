import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { wrapperScript } from '../../../src/backends/cluster/wrapper.js';
import { killGroup, tempWorkspace, waitFor } from '../../helpers/workspace.js';

/**
 * `--signal` on Slurm: the batch script runs the runner in the background, traps the signal Slurm sends it
 * (`--signal=B:`) and relays it to the runner as SIGUSR2, and exits with the runner's status. Here the "runner"
 * is a bash stand-in that logs the SIGUSR2 it gets and exits 7 on it.
 */
test('the wrapper relays --signal to the runner as SIGUSR2 and exits with its status; bad names are refused', async (t) => {
  const dir = tempWorkspace(t);
  const fakeRunner = path.join(dir, 'runner.sh');
  fs.writeFileSync(
    fakeRunner,
    `trap 'echo usr2 >> "${dir}/log"; exit 7' USR2\necho started >> "${dir}/log"\nwhile :; do sleep 0.1; done\n`,
  );
  const script = wrapperScript({
    indexVar: 'SLURM_ARRAY_TASK_ID',
    node: '/bin/bash',
    bin: fakeRunner,
    launchFile: 'launch.json',
    config: {},
    settings: {},
    relay: 'USR1',
  });
  const file = path.join(dir, 'slurm.sh');
  fs.writeFileSync(file, script, { mode: 0o755 });
  assert.equal(spawnSync('bash', ['-n', file]).status, 0);
  const sc = spawnSync('shellcheck', ['-S', 'warning', file], { encoding: 'utf8' });
  if (sc.error === undefined) assert.equal(sc.status, 0, sc.stdout);
  const shell = spawn(file, ['0'], {
    env: { ...process.env, SLURM_ARRAY_TASK_ID: '1' },
    stdio: 'ignore',
    detached: true,
  });
  const ended = new Promise<number | null>((resolve) => shell.on('exit', (code) => resolve(code)));
  t.after(() => killGroup(shell.pid!)); // the stand-in too, should the test fail before it ends
  const log = () =>
    fs.existsSync(path.join(dir, 'log')) ? fs.readFileSync(path.join(dir, 'log'), 'utf8') : '';
  await waitFor('the runner to start', () => (log().includes('started') ? true : undefined), 10_000);
  shell.kill('SIGUSR1'); // Slurm's --signal=B:USR1: the batch shell alone
  assert.equal(await ended, 7, 'the runner’s status');
  assert.equal(log(), 'started\nusr2\n');
  assert.throws(
    () =>
      wrapperScript({
        indexVar: 'X',
        node: 'n',
        bin: 'b',
        launchFile: 'l',
        config: {},
        settings: {},
        relay: 'USR1; rm',
      }),
    /not a signal name/,
  );
});

/**
 * Slurm may send `--signal=B:` from the element's first second (its timer's resolution is up to a minute): during
 * the configured header, before the runner starts, or before the runner catches SIGUSR2 (Node dies of a SIGUSR2
 * that comes before its handler). The batch shell survives it, and the runner gets it once it catches SIGUSR2.
 * The stand-in runner sets its trap only after half a second; the header takes a second.
 */
test('a warning before the runner catches SIGUSR2 kills nothing and reaches it once it does', async (t) => {
  const dir = tempWorkspace(t);
  const fakeRunner = path.join(dir, 'runner.sh');
  fs.writeFileSync(
    fakeRunner,
    `echo started >> "${dir}/log"\nsleep 0.5\ntrap 'echo usr2 >> "${dir}/log"; exit 7' USR2\necho trapping >> "${dir}/log"\nwhile :; do sleep 0.1; done\n`,
  );
  for (const when of ['in the header', 'as the runner starts']) {
    fs.rmSync(path.join(dir, 'log'), { force: true });
    const script = wrapperScript({
      indexVar: 'SLURM_ARRAY_TASK_ID',
      node: '/bin/bash',
      bin: fakeRunner,
      launchFile: 'launch.json',
      config: { header: `echo header >> "${dir}/log"; sleep 1` },
      settings: {},
      relay: 'USR1',
      outlastTerm: true,
    });
    const file = path.join(dir, 'slurm.sh');
    fs.writeFileSync(file, script, { mode: 0o755 });
    const shell = spawn(file, ['0'], {
      env: { ...process.env, SLURM_ARRAY_TASK_ID: '1' },
      stdio: 'ignore',
      detached: true,
    });
    const ended = new Promise<number | null>((resolve) => shell.on('exit', (code) => resolve(code)));
    t.after(() => killGroup(shell.pid!));
    const log = () =>
      fs.existsSync(path.join(dir, 'log')) ? fs.readFileSync(path.join(dir, 'log'), 'utf8') : '';
    const mark = when === 'in the header' ? 'header' : 'started';
    await waitFor(`the ${mark} line`, () => (log().includes(mark) ? true : undefined), 10_000);
    shell.kill('SIGUSR1');
    assert.equal(await ended, 7, `${when}: the runner’s status`);
    assert.equal(log(), 'header\nstarted\ntrapping\nusr2\n', when);
  }
});
