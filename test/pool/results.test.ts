import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { droverJson, runDrover } from '../helpers/drover.js';
import { createPool, poolWorkspace } from './helpers.js';

/**
 * Results on a local pool (issue 12): workers run the Node runner with the log folder the controller chose, so
 * `--result stdout` (read from the shared .out log) works as it does locally, and the server's task route carries
 * each task's params. (The DROVER_RESULT_FILE case runs on every backend, pools too, in test/conformance.)
 */

test('a pool launch with --result stdout: results --best names the right task; the API task route has params', async (t) => {
  const { cwd, server } = await poolWorkspace(t);
  fs.writeFileSync(
    path.join(cwd, 'score.sh'),
    'echo "working on $2"\necho "{\\"score\\": $(( ($2 - 4) * ($2 - 4) )), \\"worker\\": \\"$DROVER_WORKER\\"}"\necho done\n',
  );
  const pre = await runDrover(
    [
      'prelaunch',
      '+command',
      'sh score.sh',
      '+jobname',
      'P',
      '+arg',
      '--n',
      '1',
      '2',
      '3',
      '4',
      '5',
      '6',
      '+q',
    ],
    { cwd },
  );
  assert.equal(pre.code, 0, pre.stderr);
  await createPool(cwd, 'p', ['--workers', '2', '--cpus', '1']);
  const l = await runDrover(
    ['launch', '--pool', 'p', '--jobname', 'P', '--result', 'stdout', '--follow', '--json'],
    {
      cwd,
    },
  );
  assert.equal(l.code, 0, l.stderr);
  const best = await droverJson<{ task: number; params: object; result: { score: number; worker: string } }>(
    ['results', 'P', '--best', 'score', '--json'],
    { cwd },
  );
  assert.deepEqual([best.task, best.params, best.result.score], [4, { '--n': '4' }, 0]);
  assert.notEqual(best.result.worker, '', 'it ran on a pool worker');
  const max = await droverJson<{ task: number }>(['results', 'P', '--best', 'score:max', '--json'], { cwd });
  assert.equal(max.task, 1);

  const res = await fetch(`${server.url}/v1/jobs/P/tasks`, {
    headers: { authorization: `Bearer ${server.token}` },
  });
  assert.equal(res.status, 200);
  const tasks = (await res.json()) as { task: number; state: string; params: object }[];
  assert.deepEqual(
    tasks.map((x) => [x.task, x.state, x.params]),
    [1, 2, 3, 4, 5, 6].map((n) => [n, 'succeeded', { '--n': String(n) }]),
  );
});
