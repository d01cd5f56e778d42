import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import { childEnv, droverBin, type RunResult, startDrover } from '../helpers/drover.js';
import { runInProcessFake } from '../helpers/drover-in-process-fake.js';
import { tempWorkspace, waitFor } from '../helpers/workspace.js';

/**
 * The developer's loop runs short drover commands inside the test's process (test/helpers/drover-in-process-fake.ts,
 * a fake of the process boundary). Here the fake is held to the real thing: the same commands, as a process and
 * in-process, print the same and exit the same, and a command run in-process leaves the test's process as it
 * found it (folder, environment, exit code, open files, signal handlers).
 */

/** Run `fn` with DROVER_TEST_CLI set to `mode` (whatever the run's), put back after. */
async function withCli<T>(mode: 'in-process' | 'process', fn: () => Promise<T>): Promise<T> {
  const said = process.env.DROVER_TEST_CLI;
  process.env.DROVER_TEST_CLI = mode;
  try {
    return await fn();
  } finally {
    if (said === undefined) delete process.env.DROVER_TEST_CLI;
    else process.env.DROVER_TEST_CLI = said;
  }
}

/** `drover ...args` in this process (whatever the run's DROVER_TEST_CLI). */
function inProcess(args: string[], cwd: string, env: Record<string, string> = {}): Promise<RunResult> {
  return withCli('in-process', async () => {
    const run = runInProcessFake(args, { cwd, env: childEnv(env) }, droverBin);
    assert.ok(run, `drover ${args.join(' ')} runs in-process`);
    return await run;
  });
}

/** `drover ...args` as a process of its own. */
function asProcess(args: string[], cwd: string, env: Record<string, string> = {}): Promise<RunResult> {
  return startDrover(args, { cwd, env }).result;
}

/** What the test's process has that a command run in it could leave changed. */
function processState() {
  return {
    cwd: process.cwd(),
    env: JSON.stringify(Object.entries(process.env).sort()),
    argv: process.argv.join(' '),
    exitCode: process.exitCode,
    files: fs
      .readdirSync('/proc/self/fd')
      .map((fd) => {
        try {
          return fs.readlinkSync(`/proc/self/fd/${fd}`).replace(/\[\d+\]$/, '');
        } catch {
          return 'gone'; // the directory's own, read by readdirSync
        }
      })
      .sort(),
    listeners: ['SIGINT', 'SIGTERM', 'SIGHUP', 'exit', 'uncaughtException'].map((e) =>
      process.listenerCount(e),
    ),
    stdoutListeners: process.stdout.listenerCount('error'),
  };
}

test('short commands print and exit the same in-process as in a process of their own', async (t) => {
  const cwd = tempWorkspace(t);
  const setUp = [
    [
      'prelaunch',
      '+command',
      'sh -c',
      '+pos-arg',
      '"echo out-$0; echo err-$0 >&2; exit $0"',
      '0',
      '3',
      '+jobname',
      'j',
    ],
    ['launch', 'j', '-q'],
  ];
  for (const args of setUp) {
    const r = await asProcess(args, cwd);
    assert.ok(r.code === 0 || r.code === 1, `${args.join(' ')}: ${r.stderr}`);
  }
  const before = processState();
  const commands: { args: string[]; env?: Record<string, string> }[] = [
    { args: ['status'] },
    { args: ['status', 'j', '--tasks'] },
    { args: ['list', '--json'] },
    { args: ['list', '--jobname', 'j', '--state', 'failed'] },
    { args: ['logs', 'j', '1'] },
    { args: ['logs', 'j', '2', '--err'] },
    { args: ['results', 'j', '--json'] },
    { args: ['completion', 'bash'] },
    { args: ['config', 'list'], env: { DROVER_DIR: '.drover' } },
    { args: ['status', 'no-such-job'] },
    { args: ['list', '--tasklist', '1-x'] },
    { args: ['prelaunch', '+command'] },
    { args: ['launch', 'j', '--tasklist', '9'] },
    { args: ['status', '--no-such-option'] },
    { args: ['logs', 'j', '1', '--help'] },
  ];
  for (const { args, env } of commands) {
    const real = await asProcess(args, cwd, env);
    const twin = await inProcess(args, cwd, env);
    assert.deepEqual(twin, real, `drover ${args.join(' ')}`);
  }
  assert.deepEqual(processState(), before);
});

test('a prelaunch and launch run in-process record them as typed, run the tasks, and close what they opened', async (t) => {
  const cwd = tempWorkspace(t);
  const before = processState();
  const pre = await inProcess(['prelaunch', '+command', 'echo', '+pos-arg', 'a', 'b', '+jobname', 'j'], cwd);
  assert.equal(pre.code, 0, pre.stderr);
  const twin = await inProcess(['launch', 'j', '--json'], cwd);
  assert.equal(twin.code, 0, twin.stderr);
  // Its spawn server ends once the runner has closed its input: what the two shared closes then.
  await waitFor(
    'the launch to close what it opened',
    () => isDeepStrictEqual(processState(), before),
    10_000,
  );
  assert.deepEqual(processState(), before);
  const status = await asProcess(['status', 'j', '--json'], cwd);
  assert.equal((JSON.parse(status.stdout) as { counts: { succeeded: number } }).counts.succeeded, 2);
  const logs = await asProcess(['logs', 'j', '2'], cwd);
  assert.equal(logs.stdout, 'b\n');
  // The history has the commands as they were typed (their process's arguments).
  const history = await asProcess(['history'], cwd);
  assert.match(history.stdout, /drover prelaunch \+command echo \+pos-arg a b \+jobname j/);
  assert.match(history.stdout, /drover launch j --json/);
});

test('what the twin cannot run as a process would is run as a process', async (t) => {
  const cwd = tempWorkspace(t);
  const how = { cwd, env: childEnv() };
  await withCli('in-process', () => mustBeProcesses(how));
  // And the run's own choice: with DROVER_TEST_CLI=process, nothing runs in-process.
  await withCli('process', async () =>
    assert.equal(runInProcessFake(['status'], how, droverBin), undefined, 'DROVER_TEST_CLI=process'),
  );
});

/** Each command the twin must leave to a process is refused by it; one command at a time runs in it. */
async function mustBeProcesses(how: { cwd: string; env: NodeJS.ProcessEnv }): Promise<void> {
  for (const args of [
    ['server'],
    ['watch', 'j'],
    ['logs', 'j', '1', '--follow'],
    ['launch', 'j', '--detach'],
    ['cancel', 'j', '--wait', '5'],
    ['prelaunch', '+commands-file', '-', '+jobname', 'j'],
  ])
    assert.equal(runInProcessFake(args, how, droverBin), undefined, args.join(' '));
  assert.equal(runInProcessFake(['status'], { ...how, input: 'x' }, droverBin), undefined, 'with input');
  assert.equal(
    runInProcessFake(['status'], { ...how, setsid: true }, droverBin),
    undefined,
    'in its own session',
  );
  // One at a time: a second command while one runs here is a process (concurrent commands stay concurrent).
  const first = runInProcessFake(['status'], how, droverBin);
  assert.ok(first);
  assert.equal(runInProcessFake(['status'], how, droverBin), undefined, 'while another runs');
  await first;
}
