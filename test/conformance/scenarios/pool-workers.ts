import assert from 'node:assert/strict';
import { counts } from '../../helpers/contract.js';
import { createPoolIn, readyWorkers, startPoolServer } from '../../helpers/pool-server.js';
import { submittedId } from '../../helpers/scheduler-calls.js';
import { waitFor } from '../../helpers/workspace.js';
import { drover, logOf, prelaunch, status } from '../drive.js';
import { clustersOnly, type Scenario, workerDuration } from '../scenario.js';

/**
 * A pool whose workers are one array job of the scheduler (`drover pool create --backend slurm|gridengine`):
 * the workers run in the array's elements, a sweep runs on them, scaling counts the elements on their way, and
 * `pool down` removes the arrays. (This was test/pool/slurm-pool.test.ts and gridengine-pool.test.ts.)
 */
export const poolOnScheduler: Scenario = {
  name: 'a pool whose workers are one array job runs a sweep inside its elements; scale and down manage the arrays',
  notFor: clustersOnly,
  timeoutMs: (b) => (b.scheduler?.fake ? 150_000 : 400_000),
  async run(b, site) {
    const s = b.scheduler!;
    const readyMs = s.fake ? 60_000 : 150_000;
    await startPoolServer(site);
    await createPoolIn(
      site,
      'wp',
      ['--backend', s.kind, '--workers', '2', '--cpus', '1', '--duration', workerDuration(b)],
      readyMs,
    );
    const arrays = () =>
      site
        .calls(s.submit)
        .map(submittedId)
        .filter((id): id is string => id !== undefined);
    assert.equal(arrays().length, 1, 'one array job for the pool');
    const job = arrays()[0]!;
    const sep = s.kind === 'slurm' ? '_' : '.';
    assert.deepEqual(s.elements(site, job), [`${job}${sep}1 drover-pool-wp`, `${job}${sep}2 drover-pool-wp`]);

    const values = Array.from({ length: 20 }, (_, i) => String(i + 1));
    await prelaunch(site, 'PW', `sh -c 'echo $${s.jobIdVar} $0'`, values);
    const r = await drover(site, ['launch', '--pool', 'wp', '--jobname', 'PW', '--follow', '--json']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual((await status(site, 'PW')).counts, counts({ succeeded: 20 }));
    assert.equal(await logOf(site, 'PW', 5), `${job} 5\n`, 'the task ran inside the array element');

    // Scaling counts the array elements on their way: asking for 3 twice at once submits one more array, not
    // two (the controller makes a pool's changes one after the other), and once more after that, none.
    for (const sc of await Promise.all(
      [0, 1].map(() => drover(site, ['pool', 'scale', 'wp', '--workers', '3'], {}, true)),
    ))
      assert.equal(sc.code, 0, sc.stderr);
    if (arrays().length !== 2) {
      const all = await drover(site, ['pool', 'status', 'wp', '--json', '--all']);
      assert.fail(`${arrays().length} arrays after two scales to 3 at once, not 2; the pool: ${all.stdout}`);
    }
    const again = await drover(site, ['pool', 'scale', 'wp', '--workers', '3']);
    assert.equal(again.code, 0, again.stderr);
    const all = await drover(site, ['pool', 'status', 'wp', '--json', '--all']);
    assert.equal(arrays().length, 2, `the pool after the scales: ${all.stdout}`);
    await waitFor('3 workers ready', async () => (await readyWorkers(site, 'wp')) === 3, readyMs, 500).catch(
      async (err: Error) => {
        const all = await drover(site, ['pool', 'status', 'wp', '--json', '--all']);
        throw new Error(`${err.message}; the pool: ${all.stdout}`);
      },
    );
    const down = await drover(site, ['pool', 'down', 'wp']);
    assert.equal(down.code, 0, down.stderr);
    await waitFor(
      'the arrays to leave the queue',
      () => arrays().every((id) => s.elements(site, id).length === 0),
      60_000,
      500,
    );
  },
};
