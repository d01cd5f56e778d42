import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { childEnv, droverBin, runDrover, startDrover } from '../helpers/drover.js';
import { scriptJob } from '../helpers/script-job.js';
import { waitFor } from '../helpers/workspace.js';

/**
 * The live view of a foreground launch (issue 13): a task that fails, is killed or times out is printed as it
 * happens — its id, its sweep values (or tag), its exit code or signal, how long it ran and its stderr log —
 * on a pipe and above the bar on a real terminal (a pty from util-linux's `script`); the ETA is "–" until a
 * task has ended, never INF or NaN.
 */

/** Each task sleeps $SLOW, then: task 1 fails at once (exit 3), task 2 is killed (SIGKILL), task 3 runs on for a while, the rest succeed. */
const SCRIPT = `sleep "\${SLOW:-0}"
echo "oops $1" >&2
case "$1" in
  1) exit 3 ;;
  2) kill -9 $$ ;;
  3) sleep "\${HOLD:-0}" ;;
esac
`;

async function sweep(t: { after(fn: () => void): void }): Promise<string> {
  return scriptJob(t, SCRIPT, 'L', ['1', '2', '3', '4']);
}

// Each line says how to read the attempt's stderr: a command to type (its output is a slice of a segment).
const FAILED = /^task 1 \(pos1=1\) attempt 1 failed: exit 3 after \d+ms — (drover logs L 1 --err)$/m;
const KILLED = /^task 2 \(pos1=2\) attempt 1 killed: SIGKILL after \d+ms — (drover logs L 2 --err)$/m;

test('on a pipe, each failure is a line as it happens, with its values, exit or signal, duration and stderr log', async (t) => {
  const cwd = await sweep(t);
  const run = startDrover(['launch', 'L', '--max-tasks', '4'], { cwd, env: { HOLD: '3' } });
  let stderr = '';
  run.child.stderr!.on('data', (d: string) => {
    stderr += d;
  });
  // Both lines come while task 3 still holds the launch open.
  await waitFor('the failure lines', () => FAILED.test(stderr) && KILLED.test(stderr), 20_000, 50);
  assert.equal(run.child.exitCode, null, 'the launch is still running when the failures are shown');
  const r = await run.result;
  assert.equal(r.code, 1, r.stderr);
  for (const [re, n] of [
    [FAILED, 1],
    [KILLED, 2],
  ] as const) {
    const hint = re.exec(r.stderr)![1]!.split(' ');
    const shown = await runDrover(hint.slice(1), { cwd });
    assert.equal(shown.stdout, `oops ${n}\n`, `${hint.join(' ')} prints its stderr`);
  }
  assert.doesNotMatch(r.stderr, /task [34] /, 'tasks that succeeded are not lines of their own');
  // The summary line has the ETA; it is never INF or NaN.
  assert.match(r.stderr, /\[\S+\] 4\/4 done \| succeeded 2 failed 1 killed 1 \| [\d.]+\/s \| ETA \S+\n/);
  assert.doesNotMatch(r.stderr, /INF|NaN|undefined/);
});

test('on a terminal, failures print above the bar, and the ETA is – until a task has ended', async (t) => {
  const cwd = await sweep(t);
  // A real pty: script(1) runs the launch on one and copies what it draws to stdout.
  const cmd = `${JSON.stringify(process.execPath)} ${JSON.stringify(droverBin)} launch L --max-tasks 1`;
  const child = spawn('script', ['-qefc', cmd, '/dev/null'], {
    cwd,
    env: childEnv({ SLOW: '0.5', COLUMNS: '200' }),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stdin.end();
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    out += d;
  });
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  assert.equal(code, 1, out);
  // Every frame drawn, escape sequences dropped; and the lines left on screen (each from its last return to column 1).
  const frames = out.replace(/\r|\x1b\[1G/g, '\n').replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
  const screen = out
    .split(/\r?\n/)
    .map((l) =>
      l
        .split(/\r|\x1b\[1G/)
        .pop()!
        .replace(/\x1b\[[0-9;?]*[A-Za-z]/g, ''),
    )
    .join('\n');
  assert.match(frames, /0\/4 \| .*ETA –/, 'the first frame says the ETA is not known yet');
  assert.match(screen, FAILED);
  assert.match(screen, KILLED);
  // Each failure line is followed by the bar redrawn below it.
  const after = frames.slice(frames.search(/task 1 \(/));
  assert.match(after, /\d+% \| \d\/4 \|/);
  assert.match(frames, /100% \| 4\/4 \| succeeded 2 failed 1 killed 1/);
  assert.doesNotMatch(frames, /INF|NaN|undefined/);
});
