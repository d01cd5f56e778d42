import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { childEnv, droverBin } from '../helpers/drover.js';
import { poolToken } from './fake-worker.js';
import { type HasAfter, killInside, poolWorkspace } from './helpers.js';

/**
 * Workers on hosts of their own, for the tests of workers without a shared filesystem: each in a network
 * namespace reaching the controller over a veth pair, and in a mount namespace where the folder that holds the
 * submit side's is hidden under an empty tmpfs, so it can read or write none of it but over HTTP. Needs root
 * (`ip netns`, `unshare -m`).
 */

function run(cmd: string, args: string[]): void {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.stderr || r.error}`);
}

const ROOT = process.getuid?.() === 0;
/** Whether this machine can make such hosts: the tests skip otherwise. */
export const NETNS_TOOLS =
  ROOT && spawnSync('ip', ['netns', 'list']).status === 0 && spawnSync('unshare', ['--help']).status === 0;

export interface Netns {
  ns: string;
  /** Its end of the veth pair (inside the namespace). */
  nsIf: string;
  /** The address of this side's end: the controller's, for the first namespace. */
  hostAddr: string;
  /** Take its link down (true) or up again, with its route back here (false). */
  cut(down: boolean): void;
  remove(): void;
}

/**
 * Network namespace `index` (0, 1, ...) of this test process: a veth pair to this namespace, 10.213.N.(4i+1)
 * here and 10.213.N.(4i+2) there, with a default route back here, so that it reaches every address of this
 * side (the controller listens on the first namespace's). N: a subnet no address here is in yet.
 */
export function makeNetns(index = 0): Netns {
  removeStale();
  const n = freeSubnet();
  const ns = `drover-test-${process.pid}-${index}`;
  const [hostIf, nsIf] = [`d${index}${process.pid}a`, `d${index}${process.pid}b`].map((x) => x.slice(-15));
  const [here, there] = [`10.213.${n}.${4 * index + 1}`, `10.213.${n}.${4 * index + 2}`];
  run('ip', ['netns', 'add', ns]);
  const remove = () => {
    spawnSync('ip', ['netns', 'del', ns]);
    spawnSync('ip', ['link', 'del', hostIf!]); // gone with the namespace, unless it never moved there
  };
  const inNs = (...args: string[]) => run('ip', ['netns', 'exec', ns, 'ip', ...args]);
  try {
    run('ip', ['link', 'add', hostIf!, 'type', 'veth', 'peer', 'name', nsIf!]);
    run('ip', ['link', 'set', nsIf!, 'netns', ns]);
    run('ip', ['addr', 'add', `${here}/30`, 'dev', hostIf!]);
    run('ip', ['link', 'set', hostIf!, 'up']);
    inNs('addr', 'add', `${there}/30`, 'dev', nsIf!);
    inNs('link', 'set', nsIf!, 'up');
    inNs('link', 'set', 'lo', 'up');
    inNs('route', 'add', 'default', 'via', here);
  } catch (err) {
    remove();
    throw err;
  }
  return {
    ns,
    nsIf: nsIf!,
    hostAddr: here,
    cut(down) {
      inNs('link', 'set', nsIf!, down ? 'down' : 'up');
      // The kernel drops the routes through a link that goes down: the way back here comes again with it.
      if (!down) inNs('route', 'replace', 'default', 'via', here);
    },
    remove,
  };
}

/**
 * Remove the namespaces a killed test process left (named `drover-test-<pid>[-<index>]`, that pid gone): their
 * veth pairs would hold addresses a later test may pick.
 */
function removeStale(): void {
  const list = spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' }).stdout ?? '';
  for (const m of list.matchAll(/^(drover-test-(\d+)(?:-\d+)?)\b/gm)) {
    const pid = Number(m[2]);
    let alive = true;
    try {
      process.kill(pid, 0);
    } catch {
      alive = false;
    }
    if (!alive) spawnSync('ip', ['netns', 'del', m[1]!]);
  }
}

/** A 10.213.N.0/24 that no address here is in, trying from one chosen by this process's pid. */
function freeSubnet(): number {
  const used = spawnSync('ip', ['-o', '-4', 'addr'], { encoding: 'utf8' }).stdout ?? '';
  for (let k = 0; k < 250; k++) {
    const n = 1 + ((process.pid + k) % 250);
    if (!used.includes(` 10.213.${n}.`)) return n;
  }
  throw new Error('no free 10.213.N.0/24 subnet for a test network namespace');
}

/**
 * A pool workspace whose controller listens on the address `nets()` gives (it makes the test's namespaces), in
 * a folder of its own under the system's temp folder: the folder a worker's mount namespace hides, never the
 * parent of drover itself (a fresh clone under /tmp, as in CI). The namespaces are the caller's to remove.
 */
export async function netnsWorkspace(
  t: HasAfter,
  nets: () => Netns,
): Promise<Awaited<ReturnType<typeof poolWorkspace>>> {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'drover-netns-submit-')));
  const removeBase = () => {
    if (!process.env.DROVER_TEST_KEEP) fs.rmSync(base, { recursive: true, force: true });
  };
  try {
    const ctx = await poolWorkspace(t, ['--host', nets().hostAddr, '--lost-after', '30'], base);
    // After the workspace's own teardown (after hooks run in the order they were added).
    t.after(removeBase);
    return ctx;
  } catch (err) {
    removeBase();
    throw err;
  }
}

export interface NetnsWorker {
  child: ChildProcess;
  /** Its folder (outside the hidden one): where its tasks run. */
  dir: string;
  /** What it wrote on stderr so far. */
  stderr(): string;
  /** Stop it (SIGTERM), wait for it, kill what is left in its folder and remove the folder. */
  stop(): Promise<void>;
}

/**
 * `drover worker --no-shared-fs` of pool `pool` in namespace `net`, with `hidden` (a folder holding the submit
 * side's) hidden from it, its own folder under /var/tmp with `files` written there (the tasks' scripts).
 */
export function startNetnsWorker(
  net: Netns,
  opts: {
    cwd: string;
    server: string;
    pool: string;
    hidden: string;
    slots: number;
    files: Record<string, string>;
  },
): NetnsWorker {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join('/var/tmp', 'drover-worker-netns-')));
  if (`${dir}/`.startsWith(`${opts.hidden}/`) || droverBin.startsWith(`${opts.hidden}/`))
    throw new Error(`${opts.hidden} would hide the worker's own folder or drover itself`);
  for (const [name, text] of Object.entries(opts.files)) fs.writeFileSync(path.join(dir, name), text);
  fs.writeFileSync(path.join(dir, 'wtoken'), `${poolToken(opts.cwd, opts.pool)}\n`, { mode: 0o600 });
  const hide = 'mount -t tmpfs -o size=1m drover-hidden "$0" && exec "$@"';
  const inside = ['netns', 'exec', net.ns, 'unshare', '-m', '--propagation', 'private', 'sh', '-c', hide];
  const args = ['--server', opts.server, '--token-file', 'wtoken', '--pool', opts.pool, '--no-shared-fs'];
  const child = spawn(
    'ip',
    [...inside, opts.hidden, process.execPath, droverBin, 'worker', ...args, '--slots', String(opts.slots)],
    { cwd: dir, env: childEnv(), stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
  });
  const exited = new Promise((r) => child.once('close', r));
  return {
    child,
    dir,
    stderr: () => stderr,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
      killInside(dir);
      if (process.env.DROVER_TEST_KEEP) process.stderr.write(`kept ${dir}\nworker stderr:\n${stderr}\n`);
      else fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Take each namespace's link down and up at random moments until `stop()`, at once first (by default down
 * 150–1,000 ms, then up 100–700 ms); it resolves with how many times the links went down.
 */
export function flapLinks(
  nets: readonly Netns[],
  { up = [100, 700], down = [150, 1000] }: { up?: [number, number]; down?: [number, number] } = {},
): { stop(): Promise<number> } {
  const between = ([lo, hi]: [number, number]) => lo + Math.random() * (hi - lo);
  let flapping = true;
  let flaps = 0;
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const loops = nets.map(async (net) => {
    while (flapping) {
      net.cut(true);
      flaps++;
      await sleep(between(down));
      net.cut(false);
      await sleep(between(up));
    }
  });
  return {
    async stop() {
      flapping = false;
      await Promise.all(loops);
      return flaps;
    },
  };
}
