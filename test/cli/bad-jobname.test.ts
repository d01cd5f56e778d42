import assert from 'node:assert/strict';
import { test } from 'node:test';
import { folderWithJob, refused } from '../helpers/refused.js';
import { snapshot, tempWorkspace } from '../helpers/workspace.js';

const BAD_JOBNAMES = ['../x', '', 'a b', 'x/y'];
/** What the one line must contain: the name, or for the empty name a mention of it. */
const naming = (name: string) => (name === '' ? /jobname|''/ : name);

test('bad job names on launch, prelaunch and list exit 2, name the value, write nothing', async (t) => {
  const cwd = await folderWithJob(t);
  for (const name of BAD_JOBNAMES) {
    await refused(t, cwd, ['launch', '--jobname', name, '-q'], naming(name));
    await refused(t, cwd, ['prelaunch', '+command', 'true', '+jobname', name, '+q'], naming(name));
    await refused(t, cwd, ['list', '--jobname', name, '--json'], naming(name));
  }
});

test('bad job names in an empty folder create nothing', async (t) => {
  const cwd = tempWorkspace(t);
  for (const name of BAD_JOBNAMES) {
    await refused(t, cwd, ['launch', '--jobname', name, '-q'], naming(name));
    await refused(
      t,
      cwd,
      ['prelaunch', '+command', 'true', '+jobname', name, '+pos-arg', '1', '+q'],
      naming(name),
    );
    await refused(t, cwd, ['list', '--jobname', name], naming(name));
  }
  assert.deepEqual(snapshot(cwd), []);
});
