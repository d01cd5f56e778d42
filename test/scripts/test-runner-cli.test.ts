import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { repoRoot } from '../helpers/drover.js';

/**
 * scripts/test.mjs's choice of how tests run drover (`--real-cli`, DROVER_TEST_CLI): a value it does not know is
 * one line naming it, exit 2, nothing run; CI's and `--real-cli`'s choice is every command as a process.
 */

function runner(args: string[], env: Record<string, string | undefined>) {
  // The clusters said down: sinfo takes 9 s to fail when slurmctld is not up, and no file here reaches one.
  const down = { DROVER_TEST_SLURM_UP: '0', DROVER_TEST_GRIDENGINE_UP: '0' };
  const e: NodeJS.ProcessEnv = { ...process.env, ...down, ...env };
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete e[k];
  return spawnSync(process.execPath, [path.join(repoRoot, 'scripts', 'test.mjs'), ...args], {
    cwd: repoRoot,
    env: e,
    encoding: 'utf8',
    timeout: 30_000,
  });
}

test('DROVER_TEST_CLI that is neither process nor in-process: one line naming it, exit 2, nothing run', () => {
  for (const bad of ['bogus', '', 'Process', 'in-process ', '$(touch /tmp/x)']) {
    const r = runner(['--list', 'no-such-test-file'], { DROVER_TEST_CLI: bad });
    assert.equal(r.status, 2, `DROVER_TEST_CLI=${JSON.stringify(bad)}: ${r.stderr}`);
    assert.equal(r.stdout, '');
    assert.match(r.stderr.split('\n')[0]!, /^test: DROVER_TEST_CLI='.*' is neither process nor in-process/);
    assert.ok(r.stderr.split('\n')[0]!.includes(`'${bad}'`), r.stderr);
  }
});

test('--real-cli, DROVER_TEST_CLI=process and CI each run every command as a process; a bad option is refused', () => {
  // A file of pure code: what is checked is the mode the runner says, not what its files do.
  const pattern = 'sweep/parse-args';
  const cases: [string[], Record<string, string | undefined>][] = [
    [['--real-cli', pattern], { DROVER_TEST_CLI: 'in-process', CI: undefined }],
    [[pattern], { DROVER_TEST_CLI: 'process', CI: undefined }],
    [[pattern], { DROVER_TEST_CLI: undefined, CI: 'true' }],
  ];
  for (const [args, env] of cases) {
    const r = runner(args, env);
    assert.equal(r.status, 0, `${args.join(' ')} ${JSON.stringify(env)}: ${r.stdout}${r.stderr}`);
    assert.match(r.stdout, /every drover command runs as a process of its own/);
  }
  const local = runner([pattern], { DROVER_TEST_CLI: undefined, CI: undefined });
  assert.equal(local.status, 0, local.stdout + local.stderr);
  assert.match(local.stdout, /short drover commands run in each test's process/);
  const bad = runner(['--real-clii', pattern], {});
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /^test: unknown option '--real-clii'/);
});

test('--jobs and --spare take a count: anything else is one line naming it, exit 2, nothing run', () => {
  for (const [flag, bad] of [
    ['--spare', 'x'],
    ['--spare', '-1'],
    ['--spare', '1e3'],
    ['--spare', ''],
    ['--jobs', '0'],
    ['--jobs', '$(touch /tmp/x)'],
  ] as const) {
    const r = runner([flag, bad, '--list', 'sweep/parse-args'], {});
    assert.equal(r.status, 2, `${flag} ${JSON.stringify(bad)}: ${r.stdout}${r.stderr}`);
    assert.equal(r.stdout, '');
    assert.ok(r.stderr.split('\n')[0]!.startsWith(`test: ${flag} '${bad}' is not a number`), r.stderr);
  }
  const r = runner(['--spare', '0', '--jobs', '2', '--list', 'sweep/parse-args'], {});
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^sweep\/parse-args\.test\.ts$/m);
});
