import assert from 'node:assert/strict';
import { test } from 'node:test';
import { folderWithJob, refused } from '../helpers/refused.js';
import { snapshot, tempWorkspace } from '../helpers/workspace.js';

// Malformed (3-1, 1-3:0, a-b, 1,,2, 0, 1-3:x) and out of the job's range (4, 2-9: the job has tasks 1-3).
const BAD_TASKLISTS = ['3-1', '1-3:0', 'a-b', '1,,2', '0', '1-3:x', '4', '2-9'];

test('bad tasklists on launch and list exit 2, name the value, write nothing', async (t) => {
  const cwd = await folderWithJob(t);
  for (const tl of BAD_TASKLISTS) {
    await refused(t, cwd, ['launch', '--jobname', 'J', '--tasklist', tl, '-q'], `'${tl}'`);
    await refused(t, cwd, ['list', '--jobname', 'J', '--tasklist', tl, '--json'], `'${tl}'`);
  }
});

test('a bad tasklist in an empty folder is refused without creating .drover/', async (t) => {
  const cwd = tempWorkspace(t);
  for (const tl of ['3-1', 'a-b', '0']) {
    await refused(t, cwd, ['launch', '--jobname', 'J', '--tasklist', tl], `'${tl}'`);
  }
  assert.deepEqual(snapshot(cwd), []);
});
