import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { expandSweep, parsePrelaunchArgs, serializeJobfile } from '../../src/sweep/index.js';
import { runDrover } from '../helpers/drover.js';
import { tempWorkspace } from '../helpers/workspace.js';

/**
 * Issue 14 §1: prelaunch streams a sweep through the params file, the jobfile and the ledger a batch at a time.
 * Across several batches the jobfile, the printed commands and the ledger's tasks are those of the in-memory
 * expansion; a sweep too big for a job is refused before anything is written.
 */

const range = (n: number) => Array.from({ length: n }, (_, i) => String(i + 1));

test('a sweep of several batches: the jobfile, the output and every task row (params too) are the expansion’s', async (t) => {
  const cwd = tempWorkspace(t);
  // 3 × 1500 × 2 = 9000 tasks: more than two batches, a partial last one, tags and a flag.
  const words = [
    '+command',
    'run',
    '+jobname',
    'j',
    '+pos-arg',
    'a',
    'b',
    'c',
    '+arg',
    '--n',
    ...range(1500),
  ];
  words.push('+flag', '--fast', '+tag');
  const r = await runDrover(['prelaunch', ...words], { cwd });
  assert.equal(r.code, 0, r.stderr);
  const tasks = expandSweep(parsePrelaunchArgs(words));
  assert.equal(tasks.length, 9000);
  assert.equal(r.stdout, `${tasks.map((x) => `${x.command}\n`).join('')}Prelaunched 9000 jobs for j.\n`);
  const dir = path.join(cwd, '.drover', 'jobs', 'j');
  const entries = new Map(tasks.map((x) => [x.id, { command: x.command, tag: x.tag }]));
  assert.equal(fs.readFileSync(path.join(dir, 'jobs.json'), 'utf8'), serializeJobfile(entries));
  const db = new Database(path.join(cwd, '.drover', 'ledger.db'), { readonly: true });
  try {
    const rows = db
      .prepare('SELECT id, command, tag, params, state, revision, attempts FROM tasks ORDER BY id')
      .all() as { id: number; command: string; tag: string; params: string }[];
    assert.deepEqual(
      rows,
      tasks.map((x) => ({
        id: x.id,
        command: x.command,
        tag: x.tag,
        params: JSON.stringify(x.params),
        state: 'pending',
        revision: 1,
        attempts: 0,
      })),
    );
    assert.deepEqual(db.prepare("SELECT task_count, max_task FROM jobs WHERE name = 'j'").get(), {
      task_count: 9000,
      max_task: 9000,
    });
    assert.deepEqual(db.prepare('SELECT state, n FROM job_counts').all(), [{ state: 'pending', n: 9000 }]);
  } finally {
    db.close();
  }
  assert.deepEqual(fs.readdirSync(dir).sort(), ['jobs.json', 'params.json'], 'no temporary files left');
});

test('a sweep that makes more tasks than a job may have is refused at once, and nothing is written', async (t) => {
  const cwd = tempWorkspace(t);
  const words = ['+command', 'run', '+jobname', 'j'];
  for (const a of ['--a', '--b', '--c']) words.push('+arg', a, ...range(1000));
  const t0 = performance.now();
  const r = await runDrover(['prelaunch', ...words, '+q'], { cwd });
  assert.ok(performance.now() - t0 < 10_000);
  assert.equal(r.code, 2);
  assert.equal(r.stdout, '');
  assert.match(
    r.stderr,
    /^drover: the sweep makes 1\.00e\+9 tasks, more than a job may have \(10000000\): split it into several jobs\n$/,
  );
  assert.equal(fs.existsSync(path.join(cwd, '.drover', 'jobs', 'j')), false);
});
