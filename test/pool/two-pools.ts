import assert from 'node:assert/strict';
import { runDrover } from '../helpers/drover.js';
import { waitFor } from '../helpers/workspace.js';
import { FakeWorker, poolToken } from './fake-worker.js';
import { poolWorkspace } from './helpers.js';

/** Create a pool whose one real worker stays in its setup (so it takes nothing): fake workers do the work. */
export async function idlePool(cwd: string, name: string): Promise<void> {
  const r = await runDrover(['pool', 'create', name, '--workers', '1', '--setup', 'sleep 3600'], { cwd });
  assert.equal(r.code, 0, r.stderr);
  await waitFor(`the worker of pool ${name} in its setup`, async () => {
    const s = await runDrover(['pool', 'status', name, '--json'], { cwd });
    return (JSON.parse(s.stdout) as { workers: { state: string }[] }).workers.some(
      (w) => w.state === 'setup',
    );
  });
}

/** Launch `n` tasks of `true` onto a pool as job `job`; returns the launch id. */
export async function launchOn(cwd: string, pool: string, job: string, n: number): Promise<number> {
  const r = await runDrover(
    ['launch', '--pool', pool, '--num-jobs', String(n), '--command', 'true', '--jobname', job, '--json'],
    { cwd },
  );
  assert.equal(r.code, 0, r.stderr);
  return Number((JSON.parse(r.stdout) as { launch: string }).launch);
}

/** Two pools, p and b, with a launch of 4 tasks on b handed to an honest fake worker of b, and a direct launch. */
export async function twoPools(t: { after(fn: () => void | Promise<void>): void }, lostAfter = 120) {
  const ctx = await poolWorkspace(t, ['--lost-after', String(lostAfter)]);
  const { cwd } = ctx;
  await idlePool(cwd, 'p');
  await idlePool(cwd, 'b');
  const direct = await runDrover(['launch', '--command', 'true', '--jobname', 'D', '--json'], { cwd });
  assert.equal(direct.code, 0, direct.stderr);
  const directLaunch = Number((JSON.parse(direct.stdout) as { launch: string }).launch);
  const bLaunch = await launchOn(cwd, 'b', 'B', 4);
  const honest = await FakeWorker.register(ctx.server.url, poolToken(cwd, 'b'), 'b');
  const given = await honest.take(4);
  assert.equal(given.length, 4);
  const evil = await FakeWorker.register(ctx.server.url, poolToken(cwd, 'p'), 'p', { host: 'attacker' });
  // The same object poolWorkspace tears down: a test that restarts the server sets ctx.server.
  return Object.assign(ctx, { directLaunch, bLaunch, honest, given, evil });
}
