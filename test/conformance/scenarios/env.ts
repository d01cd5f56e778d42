import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { counts } from '../../helpers/contract.js';
import { launch, logOf, prelaunch, script, settled } from '../drive.js';
import { type Scenario, usual } from '../scenario.js';

const TASK = `printf '%s [%s] [%s] [%s]\\n' "$1" "$GREETING" "$EMPTY" "$ODD"\n`;

/** A value a shell would act on if drover ever passed it through one. */
const ODD = 'a=b; $(touch pwned) `touch pwned` "\' \\\\ end';

/**
 * `--env NAME=VALUE` reaches every task as given, on every backend (for clusters: one task per element and
 * packed elements, each run by another program), never through a shell.
 */
export const env: Scenario = {
  name: '--env NAME=VALUE reaches every task as given, never through a shell',
  timeoutMs: (b) => usual(b) * (b.scheduler ? 2 : 1),
  async run(b, site) {
    script(site, 'task.sh', TASK);
    const vars = ['--env', 'GREETING=hello world', '--env', 'EMPTY=', '--env', `ODD=${ODD}`];
    const shapes: string[][] = b.scheduler ? [[], ['--tasks-per-node', '2']] : [[]];
    for (const [i, shape] of shapes.entries()) {
      const job = `E${i}`;
      await prelaunch(site, job, 'sh task.sh', [1, 2, 3]);
      await launch(site, job, [...vars, ...shape]);
      assert.deepEqual(
        (await settled(b, site, job)).counts,
        counts({ succeeded: 3 }),
        `${job} ${shape.join(' ')}`,
      );
      for (const id of [1, 2, 3])
        assert.equal(
          await logOf(site, job, id),
          `${id} [hello world] [] [${ODD}]\n`,
          `${job} task ${id} ${shape.join(' ')}`,
        );
    }
    assert.ok(!fs.existsSync(path.join(site.cwd, 'pwned')), 'no shell ran the value');
  },
};
