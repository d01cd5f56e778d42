/**
 * `launch --after L` on the local backend: the launch waits until drover launch L of this folder has ended,
 * and runs only if every task of L succeeded (as Slurm's afterok); `--detach` waits in the background.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { droverJson, runDrover, startDrover } from '../helpers/drover.js';
import { isAlive, killLeftovers, snapshot, tempWorkspace, waitFor } from '../helpers/workspace.js';

interface Attempt {
  jobname: string;
  task: number;
  started_at: number | null;
  ended_at: number | null;
  state: string;
}

/** A folder with job `first` (its tasks wait for the file `go`, then exit with what it holds) and job `then`. */
async function folder(t: Parameters<typeof tempWorkspace>[0]): Promise<{ cwd: string; runner: number }> {
  const cwd = tempWorkspace(t);
  t.after(() => killLeftovers(cwd));
  fs.writeFileSync(path.join(cwd, 'wait.sh'), 'while [ ! -e go ]; do sleep 0.05; done\nexit "$(cat go)"\n');
  for (const [job, command] of [
    ['first', 'sh wait.sh'],
    ['then', 'true'],
  ]) {
    const r = await runDrover(
      ['prelaunch', '+command', command!, '+jobname', job!, '+pos-arg', '1', '2', '+q'],
      { cwd },
    );
    assert.equal(r.code, 0, r.stderr);
  }
  const r = await runDrover(['launch', 'first', '--detach'], { cwd });
  assert.equal(r.code, 0, r.stderr);
  return { cwd, runner: Number(/runner pid (\d+)/.exec(r.stderr + r.stdout)?.[1]) };
}

test('launch --after waits for the launch to end well, and its tasks start after the last of it ended', async (t) => {
  const { cwd } = await folder(t);
  const waiting = startDrover(['launch', 'then', '--after', '1', '--quiet'], { cwd });
  let said = '';
  waiting.child.stderr!.on('data', (d: string) => {
    said += d;
  });
  await waitFor('the launch to say it waits', () => /waiting for launch 1/.test(said));
  const s = await droverJson<{ launches: unknown[] }>(['status', 'then', '--json'], { cwd });
  assert.equal(s.launches.length, 0, 'nothing of then is launched while it waits');
  fs.writeFileSync(path.join(cwd, 'go'), '0');
  const r = await waiting.result;
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /waiting for launch 1 to end \(--after\)/);
  const attempts = await droverJson<Attempt[]>(['list', '--attempts', '--json'], { cwd });
  const lastEnd = Math.max(...attempts.filter((a) => a.jobname === 'first').map((a) => a.ended_at!));
  const then = attempts.filter((a) => a.jobname === 'then');
  assert.deepEqual(
    then.map((a) => a.state),
    ['succeeded', 'succeeded'],
  );
  for (const a of then) assert.ok(a.started_at! >= lastEnd, `then ${a.task} started after first ended`);
});

test('launch --after a launch that did not end well launches nothing and exits 1, saying why', async (t) => {
  const { cwd } = await folder(t);
  fs.writeFileSync(path.join(cwd, 'go'), '3');
  const r = await runDrover(['launch', 'then', '--after', '1'], { cwd });
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /--after 1: launch 1 ended with 2 failed of its 2 tasks: nothing launched/);
  const s = await droverJson<{ launches: unknown[]; counts: Record<string, number> }>(
    ['status', 'then', '--json'],
    { cwd },
  );
  assert.deepEqual([s.launches.length, s.counts.pending], [0, 2]);
});

test('launch --after with a launch that does not exist, or not a launch id, exits 2 at once writing nothing', async (t) => {
  const { cwd, runner } = await folder(t);
  fs.writeFileSync(path.join(cwd, 'go'), '0');
  assert.ok(runner > 0);
  await waitFor('the runner of launch 1 to end', () => !isAlive(runner));
  assert.equal((await runDrover(['status', 'first'], { cwd })).code, 0, 'its records ingested');
  const before = snapshot(cwd).filter((f) => !f.includes('ledger.db'));
  for (const [value, what] of [
    ['9', /this folder has no launch 9/],
    ['x', /'x' is not a list of launch ids/],
    ['1,', /'1,' is not a list of launch ids/],
    ['', /'' is not a list of launch ids/],
    ['1;rm -rf .', /is not a list of launch ids/],
    [' 1,', /' 1,' is not a list of launch ids/],
    [' ', /' ' is not a list of launch ids/],
    ['1\n2', /'1\\n2' is not a list of launch ids/],
  ] as const) {
    const r = await runDrover(['launch', 'then', '--after', value], { cwd });
    assert.equal(r.code, 2, `--after ${value}: ${r.stderr}`);
    assert.match(r.stderr, what);
    assert.equal(r.stderr.trimEnd().split('\n').length, 1);
    assert.deepEqual(
      snapshot(cwd).filter((f) => !f.includes('ledger.db')),
      before,
    );
  }
});

test('launch --detach --after returns at once; the launch runs in the background when the other ended well', async (t) => {
  const { cwd } = await folder(t);
  const r = await runDrover(['launch', 'then', '--after', '1', '--detach'], { cwd });
  assert.equal(r.code, 0, r.stderr);
  const pid = Number(/pid (\d+)/.exec(r.stderr)?.[1]);
  assert.ok(pid > 0 && isAlive(pid), `the waiter runs: ${r.stderr}`);
  const early = await droverJson<{ launches: unknown[] }>(['status', 'then', '--json'], { cwd });
  assert.equal(early.launches.length, 0);
  fs.writeFileSync(path.join(cwd, 'go'), '0');
  await waitFor('the waiter to launch and end', () => !isAlive(pid), 30_000);
  const s = await droverJson<{ counts: Record<string, number> }>(['status', 'then', '--json'], { cwd });
  assert.equal(s.counts.succeeded, 2);
});

test('launch --dry-run --after prints at once what it would run, waiting for nothing', async (t) => {
  const { cwd } = await folder(t);
  // Launch 1 runs until `go` is written: a dry run that waited would not end before it.
  const dry = startDrover(['launch', 'then', '--after', '1', '--dry-run'], { cwd });
  const ended = await Promise.race([
    dry.result,
    new Promise<undefined>((r) => setTimeout(() => r(undefined), 20_000).unref()),
  ]);
  if (ended === undefined) dry.child.kill('SIGKILL');
  assert.ok(ended, 'the dry run ended while launch 1 still runs');
  assert.equal(ended.code, 0, ended.stderr);
  assert.equal(ended.stdout, '1\ttrue 1\n2\ttrue 2\n');
  assert.match(
    ended.stderr,
    /--after 1: would wait for launch 1 to end, and launch only if every task of 1 succeeded\n/,
  );
  assert.match(ended.stderr, /would launch 2 task\(s\) of job 'then' on local: tasklist 1-2/);
  const s = await droverJson<{ launches: unknown[] }>(['status', 'then', '--json'], { cwd });
  assert.equal(s.launches.length, 0, 'a dry run launches nothing');
  // Once launch 1 ended badly, a dry run says that nothing would be launched, as the launch would (exit 1).
  fs.writeFileSync(path.join(cwd, 'go'), '3');
  await waitFor('launch 1 to end', async () => {
    const first = await droverJson<{ counts: Record<string, number> }>(['status', 'first', '--json'], {
      cwd,
    });
    return first.counts.failed === 2;
  });
  const none = await runDrover(['launch', 'then', '--after', '1', '--dry-run'], { cwd });
  assert.equal(none.code, 1, none.stderr);
  assert.equal(none.stdout, '');
  assert.match(
    none.stderr,
    /--after 1: launch 1 ended with 2 failed of its 2 tasks: nothing would be launched/,
  );
});

test('launch --after takes blanks around its ids, as every list does', async (t) => {
  const { cwd } = await folder(t);
  fs.writeFileSync(path.join(cwd, 'go'), '0');
  const r = await runDrover(['launch', 'then', '--after', ' 1 ', '-q'], { cwd });
  assert.equal(r.code, 0, r.stderr);
  const then = await droverJson<{ counts: Record<string, number> }>(['status', 'then', '--json'], { cwd });
  assert.equal(then.counts.succeeded, 2);
});
