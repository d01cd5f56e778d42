import assert from 'node:assert/strict';
import { counts } from '../../helpers/contract.js';
import { drover, launch, list, prelaunch, SLEEPER, script, settled, taskGone, waitStatus } from '../drive.js';
import { type Scenario, usual } from '../scenario.js';

/** Cancelling a running and a queued task, then the rest. */
export const cancel: Scenario = {
  name: 'cancelling a running and a queued task records both cancelled; the freed slot runs the next; then all',
  timeoutMs: usual,
  async run(b, site) {
    script(site, 'sleeper.sh', SLEEPER);
    await prelaunch(site, 'C', 'sh sleeper.sh', [300, 300, 300, 300]);
    await launch(site, 'C', [...b.throttle(2), '--kill-grace', '1']);
    await waitStatus(
      b,
      site,
      'C',
      '2 tasks running, 2 queued',
      (s) => s.counts.running === 2 && s.counts.queued === 2,
    );
    assert.deepEqual(
      (await list(site, 'C')).map((x) => x.state),
      ['running', 'running', 'queued', 'queued'],
    );
    const some = await drover(site, ['cancel', 'C', '--tasklist', '1,4', '--yes']);
    assert.equal(some.code, 0, some.stderr);
    await waitStatus(
      b,
      site,
      'C',
      'task 3 to take the freed slot',
      (s) => s.counts.running === 2 && s.counts.cancelled === 2,
    );
    assert.deepEqual(
      (await list(site, 'C')).map((x) => x.state),
      ['cancelled', 'running', 'running', 'cancelled'],
    );
    await taskGone(site, 1);
    const rest = await drover(site, ['cancel', 'C', '--yes']);
    assert.equal(rest.code, 0, rest.stderr);
    const s = await settled(b, site, 'C');
    assert.deepEqual(s.counts, counts({ cancelled: 4 }));
    assert.deepEqual(
      (await list(site, 'C')).map((x) => x.attempts),
      [1, 1, 1, 0],
    );
    for (const task of [2, 3]) await taskGone(site, task);
  },
};
