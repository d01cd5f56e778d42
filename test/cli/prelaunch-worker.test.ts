import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import {
  addTasks,
  expandSweep,
  parsePrelaunchArgs,
  serializeJobfile,
  serializeParamsFile,
} from '../../src/sweep/index.js';
import { runDrover } from '../helpers/drover.js';
import { needsRoot, tmpfsFolder } from '../helpers/mounts.js';
import { tempWorkspace } from '../helpers/workspace.js';

/**
 * Issue 14 §1: a big sweep's jobfile and params file are written by a worker thread (from the bundle, as users run
 * drover) while the main thread fills the ledger. After earlier tasks (+append) the files are those of the
 * in-memory expansion; when the worker fails (a full disk), the prelaunch fails with one line and nothing is
 * half-written: the files and the ledger stay as they were.
 */

const range = (n: number) => Array.from({ length: n }, (_, i) => String(i + 1));
/** 5 × 2000 = 10,000 tasks: above the worker's threshold, more than two batches. */
const BIG = ['+command', 'run', '+jobname', 'j', '+pos-arg', ...range(5), '+arg', '--n', ...range(2000)];

/** The ledger's count trigger's SQL, and each job's counts by state. */
function counting(cwd: string): { trigger: string | undefined; counts: unknown[] } {
  const db = new Database(path.join(cwd, '.drover', 'ledger.db'), { readonly: true });
  try {
    const trigger = db
      .prepare("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = 'tasks_count_insert'")
      .pluck()
      .get() as string | undefined;
    return {
      trigger,
      counts: db
        .prepare(
          'SELECT j.name, c.state, c.n FROM job_counts c JOIN jobs j ON j.id = c.job_id ORDER BY j.name, c.state',
        )
        .all(),
    };
  } finally {
    db.close();
  }
}

function ledgerTasks(cwd: string): { id: number; command: string }[] {
  const db = new Database(path.join(cwd, '.drover', 'ledger.db'), { readonly: true });
  try {
    return db.prepare('SELECT id, command FROM tasks ORDER BY id').all() as { id: number; command: string }[];
  } finally {
    db.close();
  }
}

test('+append of a big sweep: the worker writes its tasks after the earlier ones, byte for byte', async (t) => {
  const cwd = tempWorkspace(t);
  const small = ['+command', 'first', '+jobname', 'j', '+pos-arg', 'x', 'y', '+tag'];
  assert.equal((await runDrover(['prelaunch', ...small, '+q'], { cwd })).code, 0);
  const r = await runDrover(['prelaunch', ...BIG, '+flag', '--fast', '+append', '+q'], { cwd });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'Prelaunched 20002 jobs for j.\n');
  const before = expandSweep(parsePrelaunchArgs(small));
  const added = expandSweep(parsePrelaunchArgs([...BIG, '+flag', '--fast']), { startId: 3 });
  const all = [...before, ...added];
  const dir = path.join(cwd, '.drover', 'jobs', 'j');
  const entries = addTasks(new Map(before.map((x) => [x.id, { command: x.command, tag: x.tag }])), added);
  assert.equal(fs.readFileSync(path.join(dir, 'jobs.json'), 'utf8'), serializeJobfile(entries));
  assert.equal(
    fs.readFileSync(path.join(dir, 'params.json'), 'utf8'),
    serializeParamsFile(new Map(all.map((x) => [x.id, { command: x.command, params: x.params }]))),
  );
  assert.deepEqual(
    ledgerTasks(cwd),
    all.map((x) => ({ id: x.id, command: x.command })),
  );
  assert.deepEqual(fs.readdirSync(dir).sort(), ['jobs.json', 'params.json'], 'no temporary files left');
});

test('the worker fails on a full disk: one line, exit 1, and the jobfile, params file and ledger as they were', {
  skip: needsRoot,
}, async (t) => {
  const cwd = tempWorkspace(t);
  // The ledger in the workspace, the job's files on a 256 KB disk: the big sweep's jobfile does not fit there.
  const disk = tmpfsFolder(t, '256k');
  const jobfile = path.join(disk, 'jobs.json');
  const small = ['+command', 'first', '+jobname', 'j', '+jobfile', jobfile, '+pos-arg', 'x', 'y'];
  assert.equal((await runDrover(['prelaunch', ...small, '+q'], { cwd })).code, 0);
  const files = () =>
    fs
      .readdirSync(disk)
      .sort()
      .map((f) => [f, fs.readFileSync(path.join(disk, f), 'utf8')]);
  const was = files();
  const tasksWere = ledgerTasks(cwd);
  const r = await runDrover(['prelaunch', ...BIG, '+jobfile', jobfile, '+q'], { cwd });
  assert.equal(r.stdout, '');
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /^drover: .*(no space|full).*\n$/i);
  assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
  assert.match(r.stderr, new RegExp(disk.replaceAll('/', '\\/')), 'the message names the file');
  assert.deepEqual(files(), was, 'the files are as they were, and no temporary file is left');
  assert.deepEqual(ledgerTasks(cwd), tasksWere, 'the ledger is as it was');
});

test('the ledger fails while the worker writes: the worker is stopped, and no file is left behind', {
  skip: needsRoot,
}, async (t) => {
  // The ledger on a 1 MB disk, the job's files in a folder with room: 200,000 task rows overflow SQLite's page
  // cache into the write-ahead log during the inserts, which fail there, long before the worker is done.
  const cwd = tmpfsFolder(t, '1m');
  const files = tempWorkspace(t);
  const jobfile = path.join(files, 'jobs.json');
  const words = ['+command', 'run', '+jobname', 'j', '+jobfile', jobfile, '+pos-arg', ...range(100), '+arg'];
  words.push('--n', ...range(2000), '+q');
  const r = await runDrover(['prelaunch', ...words], { cwd });
  assert.equal(r.stdout, '');
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /^(drover: created .*\n)?drover: [^\n]*(full|space)[^\n]*\n$/i);
  assert.deepEqual(fs.readdirSync(files), [], 'no jobfile, params file or temporary file');
  assert.match(
    counting(cwd).trigger ?? '',
    /AFTER INSERT ON tasks/,
    'the count trigger is back (rolled back)',
  );
});

test('a big new job counts its tasks without the per-row trigger, which is back for the next sync', async (t) => {
  const cwd = tempWorkspace(t);
  const small = ['prelaunch', '+command', 'x', '+jobname', 'other', '+pos-arg', '1', '+q'];
  assert.equal((await runDrover(small, { cwd })).code, 0);
  const fresh = counting(cwd).trigger;
  assert.match(fresh ?? '', /AFTER INSERT ON tasks/);
  assert.equal((await runDrover(['prelaunch', ...BIG, '+q'], { cwd })).code, 0);
  const after = counting(cwd);
  assert.equal(after.trigger, fresh, 'the trigger is made again from its own SQL');
  assert.deepEqual(after.counts, [
    { name: 'j', state: 'pending', n: 10000 },
    { name: 'other', state: 'pending', n: 1 },
  ]);
  const more = ['+command', 'more', '+jobname', 'j', '+pos-arg', 'a', 'b', '+append', '+q'];
  assert.equal((await runDrover(['prelaunch', ...more], { cwd })).code, 0);
  assert.deepEqual(
    counting(cwd).counts[0],
    { name: 'j', state: 'pending', n: 10002 },
    'the trigger counts again',
  );
});
