import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { childEnv, droverBin, runDrover } from '../helpers/drover.js';
import { scriptJob } from '../helpers/script-job.js';

/**
 * Colours for states on a terminal only (issue 13 §5): on a real pty (util-linux's `script`) `status` and a
 * foreground launch colour state names; NO_COLOR, `--no-color` (before or after the command), TERM=dumb and
 * a pipe turn them off, and piped output never has an escape sequence.
 */

const ESC = '\u001b[';

/** Run drover on a pty; what it drew. */
function onTerminal(cwd: string, args: string[], env: Record<string, string | undefined> = {}): string {
  const cmd = [process.execPath, droverBin, ...args].map((a) => JSON.stringify(a)).join(' ');
  const r = spawnSync('script', ['-qefc', cmd, '/dev/null'], {
    cwd,
    env: childEnv({ TERM: 'xterm', NO_COLOR: undefined, FORCE_COLOR: undefined, ...env }),
    encoding: 'utf8',
    timeout: 30_000,
  });
  return r.stdout;
}

test('states are coloured on a terminal, and never with NO_COLOR, --no-color, TERM=dumb or a pipe', async (t) => {
  const cwd = await scriptJob(t, 'exit "$1"\n', 'C', ['0', '3']);
  const launched = onTerminal(cwd, ['launch', 'C']);
  assert.ok(
    launched.includes(`${ESC}31mtask 2 (pos1=3) attempt 1 failed: exit 3`),
    `a red failure line:\n${launched}`,
  );
  assert.ok(launched.includes(`${ESC}32msucceeded${ESC}39m`), 'the summary colours its states');
  const coloured = onTerminal(cwd, ['status', 'C']);
  assert.ok(coloured.includes(`${ESC}32msucceeded${ESC}39m`), coloured);
  assert.ok(coloured.includes(`${ESC}31mfailed${ESC}39m`), coloured);
  for (const [what, out] of [
    ['NO_COLOR=1', onTerminal(cwd, ['status', 'C'], { NO_COLOR: '1' })],
    ['status --no-color', onTerminal(cwd, ['status', 'C', '--no-color'])],
    ['--no-color status', onTerminal(cwd, ['--no-color', 'status', 'C'])],
    ['TERM=dumb', onTerminal(cwd, ['status', 'C'], { TERM: 'dumb' })],
  ] as const) {
    assert.match(out, /succeeded +failed/, `${what}: the table is there`);
    assert.ok(!out.includes(`${ESC}3`), `${what}: no colour in:\n${out}`);
  }
  const piped = await runDrover(['status', 'C'], { cwd, env: { FORCE_COLOR: undefined } });
  assert.equal(piped.code, 0, piped.stderr);
  assert.ok(!piped.stdout.includes('\u001b'), 'piped output has no escape sequence');
});
