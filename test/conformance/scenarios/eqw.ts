import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { counts } from '../../helpers/contract.js';
import { submittedId } from '../../helpers/scheduler-calls.js';
import { waitFor } from '../../helpers/workspace.js';
import { drover, launch, list, prelaunch, settled } from '../drive.js';
import { type Scenario, usual } from '../scenario.js';

/** Grid Engine's Eqw: an element it cannot start waits forever; drover shows error with the reason. */
export const eqw: Scenario = {
  name: 'an element Grid Engine cannot start (Eqw) shows error with the reason; --failed deletes and reruns it',
  notFor: (b) => (b.scheduler?.kind === 'gridengine' ? undefined : 'Eqw is Grid Engine’s'),
  timeoutMs: (b) => usual(b) * 2,
  async run(b, site) {
    const s = b.scheduler!;
    const out = path.join(site.cwd, 'element-logs');
    await prelaunch(site, 'Q', 'echo', ['a', 'b', 'c']);
    // The elements' output goes to a folder that does not exist: Grid Engine cannot start them.
    await launch(site, 'Q', ['--tasklist', '2-3'], ['-o', `${out}/`]);
    const first = submittedId(site.calls(s.submit)[0]!)!;
    assert.deepEqual((await settled(b, site, 'Q')).counts, counts({ pending: 1, error: 2 }));
    const text = await drover(site, ['status', 'Q']);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /Eqw/);
    assert.match(text.stdout, /can't open output file/);
    // One submission of the launch's 2 tasks: its elements are 1 and 2 (launch.json maps them to tasks 2 and 3).
    assert.deepEqual(
      s.elements(site, first),
      [`${first}.1 Q`, `${first}.2 Q`],
      'the Eqw elements wait in the queue',
    );
    fs.mkdirSync(out);
    const rerun = await launch(site, 'Q', ['--failed'], ['-o', `${out}/`]);
    assert.equal(rerun.tasks, 2);
    await waitFor('the Eqw elements deleted', () => s.elements(site, first).length === 0, 30_000, 500);
    assert.deepEqual((await settled(b, site, 'Q')).counts, counts({ pending: 1, succeeded: 2 }));
    assert.deepEqual(
      (await list(site, 'Q')).map((x) => [x.task, x.state, x.attempts]),
      [
        [1, 'pending', 0],
        [2, 'succeeded', 2],
        [3, 'succeeded', 2],
      ],
    );
  },
};
