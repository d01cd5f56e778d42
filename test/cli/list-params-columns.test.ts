/**
 * Params in the list's other forms: `--columns params` (one column per key, where the user puts it) and
 * `--csv`/`--tsv` (one column per key after `command`; a key named like a column is headed `params.KEY`).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runDrover } from '../helpers/drover.js';
import { tempWorkspace } from '../helpers/workspace.js';

test('--columns params and --csv/--tsv carry one column per params key', async (t) => {
  const cwd = tempWorkspace(t);
  const made = await runDrover(
    [
      'prelaunch',
      '+command',
      'true',
      '+jobname',
      'h',
      '+arg-mode',
      'hydra',
      '+arg',
      'host',
      'a',
      'b',
      '+arg',
      'lr',
      '0.1',
      '+q',
    ],
    { cwd },
  );
  assert.equal(made.code, 0, made.stderr);
  const table = await runDrover(['list', 'h', '--columns', 'task,params'], { cwd });
  assert.equal(table.code, 0, table.stderr);
  assert.deepEqual(
    table.stdout
      .trimEnd()
      .split('\n')
      .map((l) => l.trim().split(/\s+/)),
    [
      ['task', 'host', 'lr'],
      ['1', 'a', '0.1'],
      ['2', 'b', '0.1'],
    ],
  );
  const csv = await runDrover(['list', 'h', '--csv'], { cwd });
  const [head, first] = csv.stdout.split('\n');
  assert.match(head!, /,host,tag,command,params\.host,lr$/, 'the key named like a column is params.host');
  assert.match(first!, /,true host=a lr=0\.1,a,0\.1$/);
  const tsv = await runDrover(['list', 'h', '--tsv'], { cwd });
  assert.deepEqual(tsv.stdout.split('\n')[2]!.split('\t').slice(-2), ['b', '0.1']);
  const none = await runDrover(['prelaunch', '+command', 'true', '+jobname', 'n', '+q'], { cwd });
  assert.equal(none.code, 0);
  const empty = await runDrover(['list', 'n', '--columns', 'params'], { cwd });
  assert.deepEqual([empty.code, empty.stdout], [0, ''], 'no params: no column, no crash');
});
