import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { droverBin, droverJson, lines, runDrover } from '../helpers/drover.js';
import { fillDisk, needsRoot, tmpfsFolder } from '../helpers/mounts.js';
import { snapshot, tempWorkspace } from '../helpers/workspace.js';

/**
 * A ledger SQLite cannot use, and a disk that refuses writes: every command says so in one line that names
 * the file and what to do, exits 2 for a damaged ledger (bad input) or 1 for the environment, never shows a
 * stack trace and writes nothing half.
 */

const COMMANDS = [
  ['status', 'j'],
  ['status'],
  ['list', '--jobname', 'j'],
  ['logs', 'j', '1'],
  ['history'],
  ['cancel', 'j'],
  ['launch', '--jobname', 'j'],
  ['prelaunch', '+command', 'echo', '+jobname', 'k', '+pos-arg', '1'],
];

/** A folder with job `j` (one task, launched once) whose ledger is then damaged by `damage`. */
async function damagedWorkspace(t: { after(fn: () => void): void }, damage: (ledger: string) => void) {
  const dir = tempWorkspace(t);
  for (const args of [
    ['prelaunch', '+command', 'echo', '+jobname', 'j', '+pos-arg', '1'],
    ['launch', '--jobname', 'j', '-q'],
  ]) {
    const r = await runDrover(args, { cwd: dir });
    assert.equal(r.code, 0, r.stderr);
  }
  const ledger = path.join(dir, '.drover', 'ledger.db');
  damage(ledger);
  return { dir, ledger };
}

function assertOneLine(stderr: string, pattern: RegExp): void {
  const ls = lines(stderr);
  assert.equal(ls.length, 1, stderr);
  assert.match(ls[0]!, pattern);
  assert.doesNotMatch(stderr, /^\s+at /m);
}

test('a ledger that is not a database: one line naming it and what to do, exit 2, for every command', async (t) => {
  const { dir, ledger } = await damagedWorkspace(t, (file) =>
    fs.writeFileSync(file, 'not a database at all\n'.repeat(20)),
  );
  const before = snapshot(dir);
  for (const args of COMMANDS) {
    const r = await runDrover(args, { cwd: dir });
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assertOneLine(
      r.stderr,
      new RegExp(`^drover: ${ledger} is not a drover ledger \\(file is not a database\\): move it aside`),
    );
  }
  assert.deepEqual(snapshot(dir), before, 'nothing written');
});

test('a damaged ledger (database disk image is malformed): one line naming it and the remedy, exit 2', async (t) => {
  const { dir, ledger } = await damagedWorkspace(t, (file) => {
    const fd = fs.openSync(file, 'r+');
    fs.writeSync(fd, Buffer.alloc(8), 0, 8, 100); // the header of the schema's page
    fs.closeSync(fd);
  });
  const before = snapshot(dir);
  for (const args of COMMANDS) {
    const r = await runDrover(args, { cwd: dir });
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assertOneLine(
      r.stderr,
      new RegExp(
        `^drover: the ledger ${ledger} is damaged \\(database disk image is malformed\\): restore it`,
      ),
    );
  }
  assert.deepEqual(snapshot(dir), before, 'nothing written');
});

test('a full disk: writes fail in one line naming the path, exit 1, and leave nothing half-written', {
  skip: needsRoot,
}, async (t) => {
  const dir = tmpfsFolder(t, '2m');
  const ok = async (args: string[]) => {
    const r = await runDrover(args, { cwd: dir });
    assert.equal(r.code, 0, r.stderr);
  };
  await ok(['prelaunch', '+command', 'echo', '+jobname', 'j', '+pos-arg', '1', '2']);
  const ballast = fillDisk(dir);
  const full = /^drover: (disk full|disk I\/O error) at \/\S+/;

  // A job of 20,000 tasks: its jobfile or its rows do not fit.
  const ids = Array.from({ length: 20_000 }, (_, i) => String(i + 1));
  const pre = await runDrover(
    ['prelaunch', '+command', 'echo', '+jobname', 'big', '+pos-arg', ...ids, '+q'],
    {
      cwd: dir,
    },
  );
  assert.equal(pre.code, 1, pre.stderr);
  assertOneLine(pre.stderr, full);
  assert.ok(pre.stderr.includes(dir), pre.stderr);

  // A launch whose files cannot be written did not happen.
  const launch = await runDrover(['launch', '--jobname', 'j'], { cwd: dir });
  assert.equal(launch.code, 1, launch.stderr);
  assertOneLine(launch.stderr, full);

  // Output to a file on the full disk.
  const list = spawnSync('sh', ['-c', `"${process.execPath}" "${droverBin}" list --jobname j > out.txt`], {
    cwd: dir,
    encoding: 'utf8',
  });
  assert.equal(list.status, 1, list.stderr);
  assertOneLine(list.stderr, /^drover: disk full at standard output \(write\)/);

  // Reading still works on the full disk; and once space returns, nothing is left half-done.
  await ok(['status', 'j']);
  fs.rmSync(ballast);
  const status = await droverJson<{ tasks: number; counts: Record<string, number>; launches: unknown[] }>(
    ['status', 'j', '--json'],
    { cwd: dir },
  );
  assert.deepEqual([status.tasks, status.counts.pending, status.launches.length], [2, 2, 0]);
  const st = await runDrover(['status', 'big'], { cwd: dir });
  assert.equal(st.code, 2, 'the job that did not fit does not exist');
  assert.deepEqual(fs.readdirSync(path.join(dir, '.drover', 'jobs')).sort(), ['j']);
  await ok(['launch', '--jobname', 'j', '-q']);
});
