import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { lines, runDrover } from '../helpers/drover.js';
import { snapshot, tempWorkspace } from '../helpers/workspace.js';

test('read-only commands in an empty folder print empty JSON and create nothing', async (t) => {
  const cwd = tempWorkspace(t);
  for (const args of [
    ['status', '--json'],
    ['list', '--json'],
    ['history', '--json'],
  ]) {
    const r = await runDrover(args, { cwd });
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
    assert.deepEqual(JSON.parse(r.stdout), [], args.join(' '));
  }
  const text = await runDrover(['status'], { cwd });
  assert.equal(text.code, 0, text.stderr);
  assert.deepEqual(snapshot(cwd), []);
});

test('status of an unknown job exits 2 with one line and creates nothing', async (t) => {
  const cwd = tempWorkspace(t);
  const r = await runDrover(['status', 'nosuch', '--json'], { cwd });
  assert.equal(r.code, 2);
  assert.equal(lines(r.stderr).length, 1, r.stderr);
  assert.match(r.stderr, /nosuch/);
  assert.equal(r.stdout, '');
  assert.deepEqual(snapshot(cwd), []);
});

test('the first command that writes prints the .drover/ creation notice once, on stderr', async (t) => {
  const cwd = tempWorkspace(t);
  const notice = /created .*\.drover/;
  const first = await runDrover(['prelaunch', '+command', 'true', '+jobname', 'A', '+pos-arg', '1', '2'], {
    cwd,
  });
  assert.equal(first.code, 0, first.stderr);
  assert.equal(lines(first.stderr).filter((l) => notice.test(l)).length, 1, first.stderr);
  assert.doesNotMatch(first.stdout, notice);
  for (const args of [
    ['prelaunch', '+command', 'true', '+jobname', 'B', '+pos-arg', '1'],
    ['launch', '--jobname', 'A', '-q'],
    ['launch', '--command', 'true', '--jobname', 'C', '-q'],
  ]) {
    const r = await runDrover(args, { cwd });
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
    assert.doesNotMatch(r.stderr, notice, args.join(' '));
  }
});

test('a first launch --command in a fresh folder prints the notice once', async (t) => {
  const cwd = tempWorkspace(t);
  const r = await runDrover(['launch', '--command', 'true', '--jobname', 'C', '-q'], { cwd });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(lines(r.stderr).filter((l) => /created .*\.drover/.test(l)).length, 1, r.stderr);
});

test('a jobfile written by onager or by hand in a folder with no ledger yet is a job every command sees', async (t) => {
  const cwd = tempWorkspace(t);
  const dir = path.join(cwd, '.drover', 'jobs', 'k');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'jobs.json'), '{"1": ["echo one", ""], "3": ["echo three", "t3"]}');
  const all = await runDrover(['status', '--json'], { cwd });
  assert.equal(all.code, 0, all.stderr);
  assert.deepEqual(
    (JSON.parse(all.stdout) as { jobname: string; tasks: number }[]).map((j) => [j.jobname, j.tasks]),
    [['k', 2]],
  );
  const listed = await runDrover(['list', 'k', '--json'], { cwd });
  assert.deepEqual(
    (JSON.parse(listed.stdout) as { task: number; state: string }[]).map((x) => [x.task, x.state]),
    [
      [1, 'pending'],
      [3, 'pending'],
    ],
  );
  const launched = await runDrover(['launch', '--jobname', 'k', '-q'], { cwd });
  assert.equal(launched.code, 0, launched.stderr);
  const after = await runDrover(['status', 'k', '--json'], { cwd });
  assert.equal((JSON.parse(after.stdout) as { counts: { succeeded: number } }).counts.succeeded, 2);
});
