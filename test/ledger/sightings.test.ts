// What reconciliation sees of a launch's elements is kept apart from its handles (schema 10): the launch alone
// writes handles. A ledger of schema 9 has Grid Engine's `eqw`/`gone` sightings inside the handles; migrating it
// moves them out, and leaves every other launch's handles as they were.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readHandles, readSightings } from '../../src/backends/gridengine/handles.js';
import { getLaunch, setLaunchSightings } from '../../src/ledger/launches.js';
import { Ledger } from '../../src/ledger/ledger.js';
import { MIGRATIONS } from '../../src/ledger/migrations.js';
import { ledgerAtSchema } from '../helpers/ledger.js';

test('a ledger of schema 9 keeps its handles, and its Grid Engine sightings move to their own column', (t) => {
  const { paths, old } = ledgerAtSchema(t, 9);
  const ge = {
    arrays: [{ id: '20', offset: 0, range: '1-3:1' }],
    tasksPerNode: 1,
    keys: 'index',
  };
  const handles = [
    JSON.stringify({ ...ge, eqw: { '20.1': 100.5 }, gone: { '20.2': 200 } }),
    JSON.stringify({ ...ge, gone: { '20.3': 300 } }),
    JSON.stringify(ge),
    JSON.stringify({ pid: 42, pid_start: 7, host: 'h' }),
    '{}',
  ];
  old.exec(
    `INSERT INTO jobs (id, name, created_at, jobfile, task_count, max_task) VALUES (1, 'j', 0, '', 3, 3)`,
  );
  const insert = old.prepare(
    `INSERT INTO launches (id, job_id, backend, tasklist, task_count, created_at, dir, options, handles)
     VALUES (?, 1, 'gridengine', '1-3', 3, 0, '', '{}', ?)`,
  );
  for (const [i, h] of handles.entries()) insert.run(i + 1, h);
  old.close();

  const ledger = Ledger.open(paths);
  t.after(() => ledger.close());
  assert.equal(ledger.db.pragma('user_version', { simple: true }), MIGRATIONS.length);
  const rows = handles.map((_, i) => getLaunch(ledger, i + 1)!);
  assert.deepEqual(
    rows.map((r) => readSightings(r)),
    [{ eqw: { '20.1': 100.5 }, gone: { '20.2': 200 } }, { gone: { '20.3': 300 } }, {}, {}, {}],
  );
  assert.deepEqual(
    rows.map((r) => JSON.parse(r.handles)),
    [ge, ge, ge, { pid: 42, pid_start: 7, host: 'h' }, {}],
  );
  assert.deepEqual(readHandles(rows[0]!), ge);

  // Sightings merge by key, and never touch the handles.
  setLaunchSightings(ledger, 1, { eqw: {} });
  const after = getLaunch(ledger, 1)!;
  assert.deepEqual(readSightings(after), { eqw: {}, gone: { '20.2': 200 } });
  assert.equal(after.handles, rows[0]!.handles);
});
