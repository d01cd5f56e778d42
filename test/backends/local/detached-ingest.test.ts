import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { droverJson, runDrover, startDrover } from '../../helpers/drover.js';
import { isAlive, readRecords, tempWorkspace, waitFor, writeScript } from '../../helpers/workspace.js';

/**
 * A detached local launch's runner keeps the ledger current itself (src/backends/local/ingest-loop.ts): once it
 * ends, the ledger already holds every attempt, and nobody had to run `drover status` for it. These tests read
 * the ledger's file directly (no drover process ingests) to tell the runner's work from the CLI's.
 */

interface Launched {
  pid: number;
}

/** Task states and attempt counts, read straight from the ledger file. */
function ledgerTasks(cwd: string): { id: number; state: string; attempts: number }[] {
  const db = new Database(path.join(cwd, '.drover', 'ledger.db'), { readonly: true, fileMustExist: true });
  try {
    return db
      .prepare(
        `SELECT t.id, t.state, (SELECT count(*) FROM attempts a WHERE a.job_id = t.job_id AND a.task_id = t.id) AS attempts
         FROM tasks t ORDER BY t.id`,
      )
      .all() as { id: number; state: string; attempts: number }[];
  } finally {
    db.close();
  }
}

async function prelaunch(cwd: string, command: string, args: string[]): Promise<void> {
  const r = await runDrover(['prelaunch', '+command', command, '+jobname', 'J', '+pos-arg', ...args, '+q'], {
    cwd,
  });
  assert.equal(r.code, 0, r.stderr);
}

async function launchDetached(cwd: string, extra: string[]): Promise<number> {
  const l = await droverJson<Launched>(['launch', 'J', '--detach', '--json', ...extra], { cwd });
  assert.equal(typeof l.pid, 'number');
  return l.pid;
}

test('a detached launch leaves the ledger complete when its runner ends, before any drover status', async (t) => {
  const cwd = tempWorkspace(t);
  writeScript(cwd, 'task.sh', '[ "$1" = 3 ] && exit 1\nexit 0\n');
  await prelaunch(cwd, 'sh task.sh', ['1', '2', '3', '4', '5']);
  const pid = await launchDetached(cwd, ['--max-tasks', '2', '--retries', '1']);
  await waitFor('the runner to end', () => !isAlive(pid), 60_000, 50);
  assert.deepEqual(ledgerTasks(cwd), [
    { id: 1, state: 'succeeded', attempts: 1 },
    { id: 2, state: 'succeeded', attempts: 1 },
    { id: 3, state: 'failed', attempts: 2 },
    { id: 4, state: 'succeeded', attempts: 1 },
    { id: 5, state: 'succeeded', attempts: 1 },
  ]);
  // drover status agrees, and had nothing left to apply.
  const s = await droverJson<{ counts: Record<string, number> }>(['status', 'J', '--json'], { cwd });
  assert.equal(s.counts.succeeded, 4);
  assert.equal(s.counts.failed, 1);
});

test('the ledger learns of ended tasks while the detached runner still runs', async (t) => {
  const cwd = tempWorkspace(t);
  await prelaunch(cwd, 'sleep', ['1', '1', '1']);
  const pid = await launchDetached(cwd, ['--max-tasks', '1']);
  await waitFor(
    'a succeeded task in the ledger',
    () => ledgerTasks(cwd).some((r) => r.state === 'succeeded'),
    30_000,
    50,
  );
  assert.ok(
    isAlive(pid),
    'the runner ended before the ledger heard of any task: nothing ingested while it ran',
  );
  await waitFor('the runner to end', () => !isAlive(pid), 60_000, 50);
  assert.deepEqual(
    ledgerTasks(cwd).map((r) => r.state),
    ['succeeded', 'succeeded', 'succeeded'],
  );
});

/**
 * Another writer takes the ledger's write lock and keeps it (a long prelaunch, say) while six tasks of 0.2 s run
 * one after another: they must all end within the hold (about 1.2 s, however often the launch tries the ledger
 * meanwhile), and nothing is written until the lock is freed.
 */
async function holdLedgerWhileTasksRun(cwd: string): Promise<void> {
  const db = new Database(path.join(cwd, '.drover', 'ledger.db'), { fileMustExist: true });
  db.exec('BEGIN IMMEDIATE');
  const held = Date.now();
  const HOLD_MS = 8_000;
  let ends = 0;
  try {
    await waitFor(
      'every task to end while the ledger is held',
      () => {
        ends = readRecords(cwd).filter((r) => r.type === 'end').length;
        return ends === 6;
      },
      HOLD_MS,
      50,
    ).catch(() => {});
    assert.equal(ends, 6, `after ${Date.now() - held} ms with the ledger held, ${ends} of 6 tasks had ended`);
    assert.ok(
      ledgerTasks(cwd).every((r) => r.state !== 'succeeded'),
      'nothing was written while the lock was held',
    );
  } finally {
    db.exec('ROLLBACK');
    db.close();
  }
}

const SIX_SHORT = ['0.2', '0.2', '0.2', '0.2', '0.2', '0.2'];

test('a ledger held busy by another writer never holds up the detached runner’s tasks', async (t) => {
  const cwd = tempWorkspace(t);
  await prelaunch(cwd, 'sleep', SIX_SHORT);
  const pid = await launchDetached(cwd, ['--max-tasks', '1']);
  await holdLedgerWhileTasksRun(cwd);
  // Freed, the runner's last ingest gets everything in.
  await waitFor('the runner to end', () => !isAlive(pid), 60_000, 50);
  assert.deepEqual(
    ledgerTasks(cwd).map((r) => r.state),
    Array(6).fill('succeeded'),
  );
});

test('nor a foreground launch’s tasks (its ingest rounds skip a busy ledger too)', async (t) => {
  const cwd = tempWorkspace(t);
  await prelaunch(cwd, 'sleep', SIX_SHORT);
  const launch = startDrover(['launch', 'J', '--max-tasks', '1', '-q'], { cwd });
  // The launch is made (its rows written) once its runner records a start.
  await waitFor(
    'the first task to start',
    () => readRecords(cwd).some((r) => r.type === 'start'),
    30_000,
    20,
  );
  await holdLedgerWhileTasksRun(cwd);
  const r = await launch.result;
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(
    ledgerTasks(cwd).map((r) => r.state),
    Array(6).fill('succeeded'),
  );
});
