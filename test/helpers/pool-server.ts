import fs from 'node:fs';
import path from 'node:path';
import { killPool, liveWorkers } from '../pool/helpers.js';
import { runDrover, type Started, startDrover } from './drover.js';
import { waitFor } from './workspace.js';

/**
 * `drover server` and pools in a test folder with an environment of its own (a fake scheduler's PATH, say): the
 * server is started with it, so the pools it makes reach the same scheduler as the test's other commands. The
 * teardown takes the pools down, stops the server, and fails the test if a worker outlived that.
 */

/** Where to run, with what, and how to schedule the teardown (last registered runs first). */
export interface PoolPlace {
  cwd: string;
  env: Record<string, string | undefined>;
  defer(fn: () => Promise<void> | void): void;
}

/** A started server. */
export interface PoolServer {
  proc: Started;
  url: string;
}

/** Start `drover server` (fast heartbeats) in the place and wait until it listens. */
export async function startPoolServer(place: PoolPlace): Promise<PoolServer> {
  const { cwd, env } = place;
  const info = path.join(cwd, '.drover', 'server', 'server.json');
  const proc = startDrover(['server', '--port', '0', '--heartbeat', '0.3', '--lost-after', '4'], {
    cwd,
    env,
  });
  place.defer(() => stopPools(place, proc));
  await waitFor('the server to listen', async () => {
    if (proc.child.exitCode !== null) throw new Error(`drover server exited: ${(await proc.result).stderr}`);
    return fs.existsSync(info);
  });
  const { url } = JSON.parse(fs.readFileSync(info, 'utf8')) as { url: string };
  return { proc, url };
}

async function stopPools(place: PoolPlace, proc: Started): Promise<void> {
  const { cwd, env } = place;
  if (proc.child.exitCode === null && proc.child.signalCode === null) {
    const pools = await runDrover(['pool', 'status', '--json'], { cwd, env });
    if (pools.code === 0) {
      for (const p of JSON.parse(pools.stdout) as { name: string; state: string }[]) {
        if (p.state === 'up') await runDrover(['pool', 'down', p.name, '--force'], { cwd, env });
      }
    }
    await waitFor('the pool workers to leave', () => liveWorkers(cwd).length === 0, 30_000).catch(() => {});
    proc.child.kill('SIGTERM');
    await proc.result;
  }
  const leaked = liveWorkers(cwd);
  killPool(cwd);
  if (leaked.length > 0)
    throw new Error(`worker processes ${leaked.join(', ')} were still running after the test`);
}

/** The workers of a pool that are ready. */
export async function readyWorkers(place: PoolPlace, name: string): Promise<number> {
  const s = await runDrover(['pool', 'status', name, '--json'], { cwd: place.cwd, env: place.env });
  if (s.code !== 0) throw new Error(`pool status exited ${s.code}: ${s.stderr}`);
  return (JSON.parse(s.stdout) as { workers: { state: string }[] }).workers.filter((w) => w.state === 'ready')
    .length;
}

/** `drover pool create NAME ARGS` and wait until `--workers` of them are ready. */
export async function createPoolIn(
  place: PoolPlace,
  name: string,
  args: string[],
  timeoutMs = 30_000,
): Promise<void> {
  const r = await runDrover(['pool', 'create', name, ...args], { cwd: place.cwd, env: place.env });
  if (r.code !== 0) throw new Error(`pool create exited ${r.code}: ${r.stderr}`);
  const want = Number(args[args.indexOf('--workers') + 1]);
  await waitFor(
    `${want} workers of pool ${name} ready`,
    async () => (await readyWorkers(place, name)) === want,
    timeoutMs,
    500,
  );
}
