/**
 * The package as a user gets it: `npm pack` from a tree that was never built (prepack builds it), installed from
 * the tarball into a fresh prefix, run from another folder. Checks what the tarball holds, that installing
 * it on our Node warns of no engine mismatch, that its dependencies are only what the bundle lacks, and that
 * the installed `drover` runs a sweep and starts its server.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { repoRoot } from '../helpers/drover.js';
import { tempWorkspace } from '../helpers/workspace.js';

const pkg = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as {
  version: string;
  dependencies: Record<string, string>;
};

/** Run npm (or npx): its stdout, and its warnings (stderr). Throws with both if it fails. */
function npm(args: string[], cwd: string, bin = 'npm'): { stdout: string; warnings: string } {
  const r = spawnSync(bin, [...args, '--no-audit', '--no-fund'], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, npm_config_loglevel: 'warn', npm_config_update_notifier: 'false' },
    timeout: 300_000,
  });
  if (r.status !== 0)
    throw new Error(`${bin} ${args.join(' ')} failed (${r.status}): ${r.stderr}${r.stdout}`);
  return { stdout: r.stdout, warnings: r.stderr };
}

/** A copy of the source tree without what a build or install makes. */
function unbuiltCopy(to: string): void {
  const skip = new Set(['node_modules', 'dist', '.git', '.drover']);
  fs.cpSync(repoRoot, to, {
    recursive: true,
    filter: (src) => !skip.has(path.basename(src)) || path.dirname(src) !== repoRoot,
  });
  // The build's own tools (tsc, esbuild), as `npm ci` would have installed them.
  fs.symlinkSync(path.join(repoRoot, 'node_modules'), path.join(to, 'node_modules'));
}

test('npm pack of an unbuilt tree, installed into a fresh prefix, runs a sweep and its server', async (t) => {
  const tmp = tempWorkspace(t, 'drover-pack-');
  const src = path.join(tmp, 'src');
  unbuiltCopy(src);
  assert.ok(!fs.existsSync(path.join(src, 'dist')), 'the copy is unbuilt');

  const packed = JSON.parse(npm(['pack', '--json', '--pack-destination', tmp], src).stdout) as {
    filename: string;
    files: { path: string }[];
  }[];
  const files = packed[0]!.files.map((f) => f.path).sort();
  for (const need of [
    'bin/drover.cjs',
    'dist/drover.cjs',
    'dist/drover.cjs.cache',
    'README.md',
    'LICENSE',
    'CHANGELOG.md',
    'package.json',
  ])
    assert.ok(files.includes(need), `the tarball holds ${need} (it holds ${files.join(', ')})`);
  assert.ok(
    files.includes('dist/chunks/fastify.cjs') && files.includes('dist/chunks/fastify-cookie.cjs'),
    'the server framework comes as a chunk of the bundle',
  );
  const stray = files.filter((f) => /^(src|test|bench|scripts|dist\/src|dist\/test)\//.test(f));
  assert.deepEqual(stray, [], 'no sources, tests or unbundled modules in the tarball');

  const tarball = path.join(tmp, packed[0]!.filename);
  const prefix = path.join(tmp, 'prefix');
  // Scripts are off for one reason: better-sqlite3's install fetches a prebuilt binary from GitHub, which this
  // machine cannot reach, and builds from source instead (2 minutes). Its binary from our own install — the same
  // version for the same Node — is put where that install would have put it.
  const { warnings } = npm(
    ['install', '-g', '--prefix', prefix, tarball, '--prefer-offline', '--ignore-scripts'],
    tmp,
  );
  assert.doesNotMatch(
    warnings,
    /EBADENGINE/,
    `installing on Node ${process.version} warns of no engine mismatch`,
  );
  const installed = path.join(prefix, 'lib', 'node_modules', 'drover');
  assert.ok(
    fs.existsSync(path.join(prefix, 'share', 'man', 'man1', 'drover.1')),
    'man drover finds the page',
  );
  const deps = fs.readdirSync(path.join(installed, 'node_modules'));
  for (const bundled of ['fastify', 'commander', 'cli-progress', 'cli-table3', 'picocolors'])
    assert.ok(!deps.includes(bundled), `${bundled} is in the bundle, not installed beside it`);
  assert.deepEqual(
    Object.keys(pkg.dependencies),
    ['better-sqlite3'],
    'the one runtime dependency is the addon',
  );
  const release = path.join(installed, 'node_modules', 'better-sqlite3', 'build', 'Release');
  fs.mkdirSync(release, { recursive: true });
  fs.copyFileSync(
    path.join(repoRoot, 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node'),
    path.join(release, 'better_sqlite3.node'),
  );

  const work = path.join(tmp, 'work');
  fs.mkdirSync(work);
  const drover = path.join(prefix, 'bin', 'drover');
  const run = (args: string[]) =>
    execFileSync(drover, args, { cwd: work, encoding: 'utf8', timeout: 60_000 });
  assert.equal(run(['--version']).trim(), pkg.version);
  run(['prelaunch', '+command', 'echo hi', '+jobname', 'packed', '+arg', '--x', '1', '2', '3', '+q']);
  run(['launch', '--jobname', 'packed']);
  const status = JSON.parse(run(['status', 'packed', '--json'])) as { counts: Record<string, number> };
  assert.equal(status.counts.succeeded, 3, 'the installed drover ran the 3-task sweep');
  assert.equal(run(['logs', 'packed', '2']), 'hi --x 2\n');

  // The server, whose framework is the lazily loaded chunk, starts and answers.
  const server = spawn(drover, ['server', '--port', '0'], { cwd: work, stdio: ['ignore', 'ignore', 'pipe'] });
  const ended = new Promise<number | null>((resolve) => server.on('exit', (code) => resolve(code)));
  let err = '';
  const url = await new Promise<string>((resolve, reject) => {
    server.stderr.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m) resolve(m[1]!);
    });
    server.on('exit', () => reject(new Error(`the installed server exited: ${err}`)));
  });
  try {
    const token = fs.readFileSync(path.join(work, '.drover', 'server', 'token'), 'utf8').trim();
    const res = await fetch(`${url}/v1/jobs/packed/tasks`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(res.status, 200, 'the installed server answers an authenticated request');
    await res.arrayBuffer();
  } finally {
    server.kill('SIGTERM');
    await ended;
  }

  // npx from the tarball: the same entry point, here its fast path.
  const npxOut = npm(
    ['--yes', '--prefer-offline', '--ignore-scripts', '--package', tarball, 'drover', '--version'],
    work,
    'npx',
  );
  assert.equal(npxOut.stdout.trim(), pkg.version);
});
