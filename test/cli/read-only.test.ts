import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { droverJson, lines, runDrover } from '../helpers/drover.js';
import { mountableWorkspace, needsRoot } from '../helpers/mounts.js';
import { launchLeftUningested } from '../helpers/uningested.js';

/**
 * A read-only `.drover` (a read-only bind mount: root cannot write it either): the read commands still answer
 * from the ledger as last written, say once when the answer may be stale, and write commands fail in one line.
 */

interface Status {
  tasks: number;
  counts: Record<string, number>;
}

async function ok(dir: string, args: string[]) {
  const r = await runDrover(args, { cwd: dir });
  assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
  return r;
}

/** A folder with job `done` (launched, finished, ingested) and job `late` (finished, not ingested yet). */
async function workspace(t: { after(fn: () => void | Promise<void>): void }) {
  const { dir, readOnly } = mountableWorkspace(t);
  await ok(dir, ['prelaunch', '+command', 'echo', '+jobname', 'done', '+pos-arg', 'a', 'b']);
  await ok(dir, ['launch', '--jobname', 'done', '-q']);
  await launchLeftUningested(dir, 'late');
  return { dir, readOnly };
}

async function readCommandsAnswer(dir: string): Promise<void> {
  const done = await droverJson<Status>(['status', 'done', '--json'], { cwd: dir });
  assert.equal(done.counts.succeeded, 2);
  const list = await ok(dir, ['list', '--jobname', 'done']);
  assert.match(list.stdout, /echo a/);
  const logs = await ok(dir, ['logs', 'done', '2']);
  assert.equal(logs.stdout, 'b\n');
  const history = await ok(dir, ['history']);
  assert.match(history.stdout, /prelaunch/);
  for (const r of [list, logs, history]) assert.equal(r.stderr, '', 'nothing to say: nothing is stale');

  // The job whose records were not read in yet: shown as last written, and said so once.
  const late = await runDrover(['status', 'late', '--json'], { cwd: dir });
  assert.equal(late.code, 0, late.stderr);
  const s = JSON.parse(late.stdout) as Status;
  assert.equal(s.tasks, 1);
  assert.equal(s.counts.succeeded, 0);
  const warning = lines(late.stderr);
  assert.equal(warning.length, 1, late.stderr);
  assert.match(
    warning[0]!,
    /^drover: warning: read-only file system at \S+\.drover.*the answer may be stale$/,
  );
}

test('a read-only .drover: status, list, logs and history answer (ledger closed: no WAL index)', {
  skip: needsRoot,
}, async (t) => {
  const { dir, readOnly } = await workspace(t);
  const ledger = path.join(dir, '.drover', 'ledger.db');
  assert.ok(!fs.existsSync(`${ledger}-shm`));
  const undo = readOnly(path.join(dir, '.drover'));
  await readCommandsAnswer(dir);

  // Commands that must write say why they cannot, in one line.
  for (const args of [
    ['prelaunch', '+command', 'echo', '+jobname', 'k', '+pos-arg', '1'],
    ['launch', '--jobname', 'done'],
    ['cancel', 'late', '--yes'],
  ]) {
    const r = await runDrover(args, { cwd: dir });
    assert.equal(lines(r.stderr).length, 1, r.stderr);
    assert.equal(r.code, 1, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, /^drover: read-only file system at \S+/);
  }
  undo();
  // Writable again: the stale job is brought up to date.
  const late = await droverJson<Status>(['status', 'late', '--json'], { cwd: dir });
  assert.equal(late.counts.succeeded, 1);
});

test('a read-only .drover while another process has the ledger open (its WAL index exists)', {
  skip: needsRoot,
}, async (t) => {
  const { dir, readOnly } = await workspace(t);
  const ledger = path.join(dir, '.drover', 'ledger.db');
  const holder = new Database(ledger);
  t.after(() => holder.close());
  holder.pragma('wal_autocheckpoint = 0');
  holder.prepare("INSERT INTO history (at, kind, argv, cwd) VALUES (1, 'launch', '[\"held\"]', '/')").run();
  assert.ok(fs.statSync(`${ledger}-wal`).size > 0);
  readOnly(path.join(dir, '.drover'));
  await readCommandsAnswer(dir);
  const history = await ok(dir, ['history']);
  assert.match(history.stdout, /held/, 'what is only in the WAL is read too');
});
