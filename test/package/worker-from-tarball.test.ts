/**
 * The worker binary travels: a worker host needs Node.js and the packed drover, nothing else (no clone, no build,
 * no compiler). The tarball of this build is run with `npx --package drover-X.tgz drover worker`, as
 * docs/pools.md tells a worker host to, from a folder outside the repository and with an environment that holds
 * nothing of it: a fresh HOME and npm cache (npx fetches better-sqlite3 from the registry, its install script
 * skipped: a worker opens no database), no node_modules/.bin on PATH. It joins a pool of a real controller started
 * from the repository on every interface (`--host 0.0.0.0`, reached at the address it advertises), runs the
 * pool's tasks, and drains and exits 0 when the pool is scaled to 0.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { droverJson, repoRoot, runDrover } from '../helpers/drover.js';
import { tempWorkspace, waitFor } from '../helpers/workspace.js';
import { createPool, groupAlive, liveWorkers, poolWorkspace } from '../pool/helpers.js';

const pkg = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string };

/** A host's environment: a PATH without any node_modules/.bin (npm run adds the repo's), a HOME of its own. */
function hostEnv(home: string): NodeJS.ProcessEnv {
  const PATH = (process.env.PATH ?? '')
    .split(path.delimiter)
    .filter((p) => p !== '' && !p.includes('node_modules') && !p.startsWith(repoRoot))
    .join(path.delimiter);
  const env: NodeJS.ProcessEnv = {
    PATH,
    HOME: home,
    npm_config_cache: path.join(home, '.npm'),
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
    npm_config_loglevel: 'warn',
  };
  // How this machine reaches the registry (a mirror, a proxy, the CA of a proxy that inspects TLS), as its
  // environment says: a host's own settings, nothing of the repository.
  for (const k of [
    'npm_config_registry',
    'HTTPS_PROXY',
    'https_proxy',
    'HTTP_PROXY',
    'http_proxy',
    'NO_PROXY',
    'no_proxy',
    'NODE_EXTRA_CA_CERTS',
    'SSL_CERT_FILE',
    'SSL_CERT_DIR',
  ])
    if (process.env[k] !== undefined) env[k] = process.env[k];
  return env;
}

/** Run a command of the host to its end; throws with its output unless it exits 0. */
function onHost(bin: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): string {
  const r = spawnSync(bin, args, { cwd, env, encoding: 'utf8', timeout: 300_000 });
  if (r.status !== 0) {
    // Killed at the limit: most often the registry unreachable (a TLS proxy's CA not in NODE_EXTRA_CA_CERTS).
    const how = r.signal
      ? `was stopped by ${r.signal} (limit 300 s; can it reach the registry?)`
      : `exited ${r.status}`;
    throw new Error(`${bin} ${args.join(' ')} ${how}: ${r.stderr}${r.stdout}`);
  }
  return r.stdout;
}

/** The pids of the live processes of the pool's workers, from `pool status`. */
async function poolWorkers(cwd: string): Promise<{ id: string; pid: number; state: string }[]> {
  const s = await droverJson<{ workers: { id: string; pid: number; state: string }[] }>(
    ['pool', 'status', 'p', '--json'],
    { cwd },
  );
  return s.workers;
}

test('drover worker from the packed tarball, with npx on a clean host, runs a pool’s tasks and leaves', async (t) => {
  const { cwd, server } = await poolWorkspace(t, ['--host', '0.0.0.0']);
  const tmp = tempWorkspace(t, 'drover-worker-host-');
  const home = path.join(tmp, 'home');
  const host = path.join(tmp, 'host');
  fs.mkdirSync(home);
  fs.mkdirSync(host);
  const env = hostEnv(home);

  // The tarball of this build (npm run build made it; pack-install.test.ts packs an unbuilt tree).
  const packed = JSON.parse(
    onHost('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', tmp], repoRoot, process.env),
  ) as { filename: string }[];
  const tarball = path.join(tmp, packed[0]!.filename);
  const npx = ['--yes', '--ignore-scripts', '--package', tarball, 'drover'];

  const help = onHost('npx', [...npx, 'worker', '--help'], host, env);
  for (const flag of ['--server', '--pool', '--token-file'])
    assert.ok(help.includes(flag), `drover worker --help from the tarball names ${flag}:\n${help}`);
  // The same binary installed for good: npm install -g (here into a prefix of the host's own).
  const prefix = path.join(tmp, 'prefix');
  onHost('npm', ['install', '-g', '--prefix', prefix, '--ignore-scripts', tarball], host, env);
  const installed = path.join(prefix, 'bin', 'drover');
  assert.equal(onHost(installed, ['--version'], host, env).trim(), pkg.version);
  assert.match(onHost(installed, ['worker', '--help'], host, env), /--token-file/);

  // The controller listens on every interface and tells workers where to find it.
  assert.doesNotMatch(
    server.url,
    /\/\/(127\.|localhost|\[::1\])/,
    `an address other hosts reach: ${server.url}`,
  );
  // A pool whose own worker has left: only the one from the tarball will run its tasks.
  await createPool(cwd, 'p', ['--workers', '1', '--cpus', '2']);
  assert.equal((await runDrover(['pool', 'scale', 'p', '--workers', '0'], { cwd })).code, 0);
  await waitFor('the pool’s own worker to leave', () => liveWorkers(cwd).length === 0, 20_000);

  // The worker token travels as a file of mode 0600.
  const made = await droverJson<{ token: string }>(
    ['server', 'token', 'create', '--worker', '--pool', 'p', '--json'],
    { cwd },
  );
  fs.writeFileSync(path.join(host, 'worker-token'), `${made.token}\n`, { mode: 0o600 });

  const worker: ChildProcess = spawn(
    'npx',
    [...npx, 'worker', '--server', server.url, '--pool', 'p', '--token-file', 'worker-token', '--cpus', '2'],
    { cwd: host, env, detached: true, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const pgid = worker.pid!;
  let err = '';
  worker.stderr!.setEncoding('utf8').on('data', (d: string) => {
    err += d;
  });
  const exited = new Promise<number | null>((resolve) => worker.on('close', (code) => resolve(code)));
  t.after(() => {
    // Only the process group this test started (npx, the worker it runs, their tasks).
    if (groupAlive(pgid)) process.kill(-pgid, 'SIGKILL');
  });

  // Within 2 minutes (npx unpacks the tarball first); a worker that exits fails the test at once.
  const ready = await waitFor(
    'the worker from the tarball to be ready',
    async () =>
      worker.exitCode !== null || worker.signalCode !== null
        ? ('exited' as const)
        : (await poolWorkers(cwd)).find((w) => w.state === 'ready'),
    120_000,
  );
  if (ready === 'exited')
    throw new Error(`npx drover worker exited ${await exited} before it was ready: ${err}`);
  const cmdline = fs.readFileSync(`/proc/${ready.pid}/cmdline`, 'utf8').split('\0').join(' ');
  assert.ok(
    cmdline.includes(path.join(home, '.npm', '_npx')) && !cmdline.includes(repoRoot),
    `the worker runs the drover npx unpacked, not the repository's: ${cmdline}`,
  );

  const launched = await runDrover(
    [
      'launch',
      '--pool',
      'p',
      '--num-jobs',
      '6',
      '--command',
      'echo "rank $DROVER_JOB_RANK of $DROVER_NUM_JOBS"',
      '--jobname',
      'travel',
      '--follow',
    ],
    { cwd },
  );
  assert.equal(launched.code, 0, `every task succeeded:\n${launched.stderr}`);
  const status = await droverJson<{ counts: Record<string, number> }>(['status', 'travel', '--json'], {
    cwd,
  });
  assert.equal(status.counts.succeeded, 6, JSON.stringify(status.counts));
  assert.equal((await runDrover(['logs', 'travel', '4'], { cwd })).stdout, 'rank 3 of 6\n');
  // The worker's own journal, in the folder it started in, holds the end of every task.
  const journal = path.join(host, '.drover', 'pools', 'p', 'workers', ready.id);
  const ended = new Map<number, string>();
  for (const dir of fs.readdirSync(journal, { recursive: true, encoding: 'utf8' }))
    if (dir.endsWith('.jsonl'))
      for (const line of fs.readFileSync(path.join(journal, dir), 'utf8').split('\n').filter(Boolean)) {
        const r = JSON.parse(line) as { type?: string; task?: number; state?: string };
        if (r.type === 'end' && r.task !== undefined) ended.set(r.task, String(r.state));
      }
  assert.deepEqual(
    [...ended].sort((a, b) => a[0] - b[0]),
    [1, 2, 3, 4, 5, 6].map((task) => [task, 'succeeded']),
    'the tarball’s worker ran every task',
  );

  // Scaled to 0, it drains, tells the controller it leaves, and exits 0; npx with it.
  assert.equal((await runDrover(['pool', 'scale', 'p', '--workers', '0'], { cwd })).code, 0);
  assert.equal(await exited, 0, `npx drover worker exits 0:\n${err}`);
  const all = await droverJson<{ workers: unknown[]; gone_reasons: string[] }>(
    ['pool', 'status', 'p', '--json'],
    { cwd },
  );
  assert.deepEqual(all.workers, [], 'no live worker is left');
  assert.ok(all.gone_reasons.includes('drained'), `it left drained: ${all.gone_reasons.join(', ')}`);
  assert.ok(!groupAlive(pgid), 'nothing of the worker’s process group is left');
});
