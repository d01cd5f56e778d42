// Differential test against onager itself: test/fixtures/onager-prelaunch.json holds, for each sweep, the stdout
// and the jobfile bytes that onager's own `prelaunch` (camall3n/onager at 9ec5524, run with Debian's python3 and
// python3-tabulate) printed and wrote. drover must print the same command lines and write the same bytes.
// The help and version words among the cases are values of the sweep: onager writes the job, and so must drover.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { repoRoot, runDrover } from '../helpers/drover.js';
import { tempWorkspace } from '../helpers/workspace.js';

interface Case {
  name: string;
  /** prelaunch argv of each run, in order, in one folder. */
  runs: string[][];
  /** onager's stdout of each run. */
  stdout: string[];
  /** The jobfile after the last run, byte for byte. */
  jobfile: string;
}

const cases = JSON.parse(
  fs.readFileSync(path.join(repoRoot, 'test', 'fixtures', 'onager-prelaunch.json'), 'utf8'),
) as Case[];

for (const c of cases) {
  test(`prelaunch as onager: ${c.name}`, async (t) => {
    const cwd = tempWorkspace(t);
    for (const [i, argv] of c.runs.entries()) {
      const r = await runDrover(['prelaunch', ...argv], { cwd });
      assert.equal(r.code, 0, r.stderr);
      // drover adds one line of its own after the commands.
      assert.equal(r.stdout.replace(/Prelaunched \d+ jobs for j\.\n$/, ''), c.stdout[i]);
    }
    const jobfile = fs.readFileSync(path.join(cwd, '.drover', 'jobs', 'j', 'jobs.json'), 'utf8');
    assert.equal(jobfile, c.jobfile);
  });
}
