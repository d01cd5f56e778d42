import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe } from 'node:test';
import Database from 'better-sqlite3';
import { counts, list } from '../../helpers/contract.js';
import { runDrover } from '../../helpers/drover.js';
import { waitFor } from '../../helpers/workspace.js';
import {
  clusterTest,
  clusterWorkspace,
  dryRun,
  elementsInQueue,
  inQueue,
  launch,
  prelaunch,
  settled,
} from './cluster.js';

/**
 * Launches recorded before one qsub per launch: one array per tasklist block, array index = task id (handles
 * `keys: 'task'`). Such a launch is rebuilt on the real Grid Engine: drover writes the launch's files, then the
 * test submits its blocks as the old drover did (`-t 1-2`, `-t 5-5`) and records the old handles. Reconcile,
 * cancel and an Eqw relaunch must find their elements by task id.
 */

/** `qsub ARGV` run by the test (as the old drover did); returns the job id. */
function qsub(argv: string[], cwd: string): string {
  const r = spawnSync('qsub', argv, { cwd, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.trim().split('.')[0]!;
}

describe('Grid Engine: launches recorded by older drovers', () => {
  clusterTest(
    'an old launch of two arrays keyed by task id reconciles, cancels and relaunches',
    async (t) => {
      const cwd = clusterWorkspace(t);
      await prelaunch(cwd, 'O', '+command', 'echo', '+pos-arg', 'a', 'b', 'c', 'd', 'e');
      const dry = await dryRun(cwd, 'O', '--tasklist', '1-2,5');
      // Today's drover writes the launch (elements 1..3 = tasks 1, 2, 5); its own submission is held and deleted.
      const held = await launch(cwd, 'O', '--tasklist', '1-2,5', '--', '-h');
      spawnSync('qdel', [held.handles.arrays[0]!.id], { encoding: 'utf8' });
      await waitFor('the held array deleted', () => !inQueue(held.handles.arrays[0]!.id), 30_000);

      const argv = dry.submissions[0]!.slice(1).map((a) => a.replaceAll('<N>', held.launch));
      const at = argv.indexOf('-t');
      const script = argv.at(-2)!;
      // Block 1-2 as the old drover submitted it, with output to a missing folder: its elements sit in Eqw.
      const a = qsub(
        [...argv.slice(0, at), '-o', `${path.join(cwd, 'missing')}/`, '-t', '1-2:1', script, '0'],
        cwd,
      );
      // Block 5-5, held: index 5 runs the launch file's group 3 (= -2 + 5), task 5.
      const b = qsub([...argv.slice(0, at), '-h', '-t', '5-5:1', script, '-2'], cwd);
      const old = {
        arrays: [
          { id: a, offset: 0, range: '1-2:1' },
          { id: b, offset: 0, range: '5-5:1' },
        ],
        tasksPerNode: 1,
        keys: 'task',
      };
      const db = new Database(path.join(cwd, '.drover', 'ledger.db'));
      try {
        db.prepare('UPDATE launches SET handles = ? WHERE id = ?').run(
          JSON.stringify(old),
          Number(held.launch),
        );
      } finally {
        db.close();
      }

      // Reconcile: elements A.1 and A.2 in Eqw are tasks 1 and 2; B.5 pending is task 5.
      const states = await waitFor(
        'tasks 1 and 2 in error',
        async () => {
          const tasks = await list('O', { cwd });
          return tasks.filter((x) => x.state === 'error').length === 2 ? tasks : undefined;
        },
        60_000,
        500,
      );
      assert.deepEqual(
        states.map((x) => [x.task, x.state]),
        [
          [1, 'error'],
          [2, 'error'],
          [3, 'pending'],
          [4, 'pending'],
          [5, 'queued'],
        ],
      );
      // Cancel task 5: drover deletes element B.5, which never ran.
      const c = await runDrover(['cancel', 'O', '--tasklist', '5', '--yes'], { cwd });
      assert.equal(c.code, 0, c.stderr);
      await waitFor('B.5 deleted', () => elementsInQueue(b).size === 0, 30_000);
      assert.deepEqual([...elementsInQueue(a).keys()], [1, 2], 'the Eqw elements are left alone');
      const s = await settled(cwd, 'O', 60_000);
      assert.deepEqual(s.counts, counts({ pending: 2, error: 2, cancelled: 1 }));

      // --failed: the old Eqw elements A.1, A.2 are deleted, tasks 1 and 2 run again in one new array.
      const rerun = await launch(cwd, 'O', '--failed');
      assert.deepEqual(
        rerun.handles.arrays.map((x) => x.range),
        ['1-2:1'],
      );
      await waitFor('the old Eqw array deleted', () => !inQueue(a), 30_000);
      const after = await settled(cwd, 'O', 60_000);
      assert.deepEqual(after.counts, counts({ pending: 2, succeeded: 2, cancelled: 1 }));
    },
  );
});
