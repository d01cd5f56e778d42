import assert from 'node:assert/strict';
import { counts } from '../../helpers/contract.js';
import { readRecords } from '../../helpers/workspace.js';
import { launch, list, logOf, prelaunch, script, settled } from '../drive.js';
import { clustersOnly, type Scenario, usual } from '../scenario.js';

const TASK = 'if [ "$1" = 5 ]; then exit 3; fi\necho "task $1 slot $DROVER_SLOT"\n';

/** Packed elements: several tasks per array element, each with its own record, state and log. */
export const packed: Scenario = {
  name: 'packed elements (--tasks-per-node 3, 2 at once) run every task with its own state and log',
  notFor: clustersOnly,
  timeoutMs: usual,
  async run(b, site) {
    script(site, 'task.sh', TASK);
    await prelaunch(site, 'P', 'sh task.sh', [1, 2, 3, 4, 5, 6, 7]);
    const l = await launch(site, 'P', ['--tasks-per-node', '3', '--max-tasks-per-node', '2']);
    assert.equal(l.tasks, 7);
    const s = await settled(b, site, 'P');
    assert.deepEqual(s.counts, counts({ succeeded: 6, failed: 1 }));
    assert.deepEqual(
      (await list(site, 'P')).map((x) => [x.task, x.state, x.exit_code]),
      [1, 2, 3, 4, 5, 6, 7].map((id) => (id === 5 ? [5, 'failed', 3] : [id, 'succeeded', 0])),
    );
    for (const id of [1, 2, 3, 4, 6, 7])
      assert.match(await logOf(site, 'P', id), new RegExp(`^task ${id} slot [01]\\n$`));
    const records = readRecords(site.cwd);
    const runners = new Set(records.filter((r) => r.type === 'runner').map((r) => r.runner));
    assert.equal(runners.size, 3, 'one runner per element: 7 tasks in elements of 3');
    const slots = new Set(records.filter((r) => r.type === 'start').map((r) => r.slot));
    assert.deepEqual([...slots].sort(), [0, 1]);
  },
};
