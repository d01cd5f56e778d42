import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { list } from '../helpers/contract.js';
import { droverJson } from '../helpers/drover.js';
import { isAlive, tempWorkspace, waitFor } from '../helpers/workspace.js';

// A status call while a task waits for its retry must not close the launch: the retry's records would then
// never be ingested and the ledger would keep the first attempt's failure.
test('a status call during a retry backoff does not lose the retry: the task ends succeeded with 2 attempts', async (t) => {
  const cwd = tempWorkspace(t);
  const launched = await droverJson<{ pid: number }>(
    [
      'launch',
      '--command',
      'echo "$DROVER_ATTEMPT" >> attempts.txt; test "$DROVER_ATTEMPT" -ge 2',
      '--jobname',
      'R',
      '--retries',
      '1',
      '--retry-delay',
      '3',
      '--detach',
      '--json',
    ],
    { cwd },
  );
  // Look at the job while attempt 1 has failed and attempt 2 has not started.
  await waitFor('attempt 1 to have ended', async () => {
    const [task] = await list('R', { cwd });
    return task!.attempts >= 1 && task!.state !== 'running' && task!.state !== 'queued';
  });
  await waitFor('the runner to end', () => !isAlive(launched.pid));
  assert.equal(fs.readFileSync(path.join(cwd, 'attempts.txt'), 'utf8'), '1\n2\n', 'the task ran twice');
  const [task] = await list('R', { cwd });
  assert.deepEqual([task!.state, task!.exit_code, task!.attempts], ['succeeded', 0, 2]);
});
