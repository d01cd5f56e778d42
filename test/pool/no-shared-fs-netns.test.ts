import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { childEnv, droverBin } from '../helpers/drover.js';
import { poolToken } from './fake-worker.js';
import { killInside, poolWorkspace } from './helpers.js';
import { checkOutputs, EMIT, oneSuccessEach, runSweep } from './sweep-outputs.js';
import { idlePool } from './two-pools.js';

/**
 * The final test of workers without a shared filesystem: the worker runs in a network namespace of its
 * own, reaching the controller over a veth pair, and in a mount namespace where the folder that holds the submit
 * side's is hidden under an empty tmpfs — it cannot read or write a byte of it but over HTTP. Its link is taken down and up
 * at random moments while a sweep runs. Needs root (`ip netns`, `unshare -m`); skipped otherwise.
 */

function run(cmd: string, args: string[]): void {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.stderr || r.error}`);
}

const ROOT = process.getuid?.() === 0;
const TOOLS =
  ROOT && spawnSync('ip', ['netns', 'list']).status === 0 && spawnSync('unshare', ['--help']).status === 0;

/** A network namespace with a veth pair to this one: 10.213.N.1 here, 10.213.N.2 there. */
function makeNetns(): { ns: string; nsIf: string; hostAddr: string; remove(): void } {
  const n = 1 + (process.pid % 250);
  const ns = `drover-test-${process.pid}`;
  const [hostIf, nsIf] = [`drv${process.pid}a`, `drv${process.pid}b`].map((x) => x.slice(-15));
  const hostAddr = `10.213.${n}.1`;
  run('ip', ['netns', 'add', ns]);
  const remove = () => {
    spawnSync('ip', ['netns', 'del', ns]);
    spawnSync('ip', ['link', 'del', hostIf!]); // gone with the namespace, unless it never moved there
  };
  try {
    run('ip', ['link', 'add', hostIf!, 'type', 'veth', 'peer', 'name', nsIf!]);
    run('ip', ['link', 'set', nsIf!, 'netns', ns]);
    run('ip', ['addr', 'add', `${hostAddr}/30`, 'dev', hostIf!]);
    run('ip', ['link', 'set', hostIf!, 'up']);
    run('ip', ['netns', 'exec', ns, 'ip', 'addr', 'add', `10.213.${n}.2/30`, 'dev', nsIf!]);
    run('ip', ['netns', 'exec', ns, 'ip', 'link', 'set', nsIf!, 'up']);
    run('ip', ['netns', 'exec', ns, 'ip', 'link', 'set', 'lo', 'up']);
  } catch (err) {
    remove();
    throw err;
  }
  return { ns, nsIf: nsIf!, hostAddr, remove };
}

test('a --no-shared-fs worker in its own network and mount namespaces, its link flapping: logs and results whole', {
  skip: TOOLS ? false : 'needs root, ip netns and unshare',
  timeout: 300_000,
}, async (t) => {
  const net = makeNetns();
  // The submit side's folder in a parent of its own, which the worker's mount namespace hides: never the
  // parent of drover itself (a fresh clone under /tmp, as in CI).
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'drover-netns-submit-')));
  let ctx: Awaited<ReturnType<typeof poolWorkspace>>;
  try {
    ctx = await poolWorkspace(t, ['--host', net.hostAddr, '--lost-after', '30'], base);
  } catch (err) {
    net.remove();
    fs.rmSync(base, { recursive: true, force: true });
    throw err;
  }
  // After the workspace's own teardown (after hooks run in the order they were added).
  t.after(() => fs.rmSync(base, { recursive: true, force: true }));
  const { cwd, server } = ctx;
  await idlePool(cwd, 'p');
  // The worker's folder, outside the folder that holds the submit side's (which its mount namespace hides).
  const hidden = path.dirname(cwd);
  const dir = fs.realpathSync(fs.mkdtempSync(path.join('/var/tmp', 'drover-worker-netns-')));
  assert.ok(
    !`${dir}/`.startsWith(`${hidden}/`) && !droverBin.startsWith(`${hidden}/`),
    `${hidden} hides nothing else`,
  );
  fs.writeFileSync(path.join(dir, 'emit.sh'), EMIT); // the launch's folder is not there: tasks run here
  fs.writeFileSync(path.join(dir, 'wtoken'), `${poolToken(cwd, 'p')}\n`, { mode: 0o600 });
  const hide = 'mount -t tmpfs -o size=1m drover-hidden "$0" && exec "$@"';
  const inside = [
    'netns',
    'exec',
    net.ns,
    'unshare',
    '-m',
    '--propagation',
    'private',
    'sh',
    '-c',
    hide,
    hidden,
  ];
  const workerArgs = ['--server', server.url, '--token-file', 'wtoken', '--pool', 'p', '--no-shared-fs'];
  const worker = spawn(
    'ip',
    [...inside, process.execPath, droverBin, 'worker', ...workerArgs, '--slots', '2'],
    { cwd: dir, env: childEnv(), stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  worker.stderr!.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
  });
  const exited = new Promise((r) => worker.once('close', r));
  t.after(async () => {
    if (worker.exitCode === null && worker.signalCode === null) worker.kill('SIGTERM');
    await exited;
    killInside(dir);
    net.remove();
    if (process.env.DROVER_TEST_KEEP) process.stderr.write(`kept ${dir}\nworker stderr:\n${stderr}\n`);
    else fs.rmSync(dir, { recursive: true, force: true });
  });

  // The link goes down and up at random moments while the sweeps run.
  let flapping = true;
  let flaps = 0;
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const flapper = (async () => {
    while (flapping) {
      await sleep(100 + Math.random() * 600);
      if (!flapping) break;
      run('ip', ['netns', 'exec', net.ns, 'ip', 'link', 'set', net.nsIf, 'down']);
      flaps++;
      await sleep(150 + Math.random() * 850);
      run('ip', ['netns', 'exec', net.ns, 'ip', 'link', 'set', net.nsIf, 'up']);
    }
  })();
  try {
    await runSweep(cwd, 'N', 16, 'segments');
    await runSweep(cwd, 'M', 8, 'files');
  } finally {
    flapping = false;
    await flapper;
  }
  assert.ok(flaps >= 3, `the link went down ${flaps} times`);
  assert.match(
    stderr,
    /this host has no folder .*: its tasks run in /,
    'the submit folder was hidden from it',
  );
  await checkOutputs(cwd, 'N', 16);
  await checkOutputs(cwd, 'M', 8);
  oneSuccessEach(cwd, 'N', 16);
  oneSuccessEach(cwd, 'M', 8);
});
