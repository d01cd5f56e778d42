import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { runDrover } from './drover.js';
import { tempWorkspace } from './workspace.js';

/**
 * A fresh folder holding the job `jobname`: the task `sh t.sh ARG` for each of `args`, where t.sh is `script`
 * (the test's shell script, given `$1`).
 */
export async function scriptJob(
  t: Parameters<typeof tempWorkspace>[0],
  script: string,
  jobname: string,
  args: readonly string[],
): Promise<string> {
  const cwd = tempWorkspace(t);
  fs.writeFileSync(path.join(cwd, 't.sh'), script);
  const r = await runDrover(
    ['prelaunch', '+command', 'sh t.sh', '+jobname', jobname, '+pos-arg', ...args, '+q'],
    {
      cwd,
    },
  );
  assert.equal(r.code, 0, r.stderr);
  return cwd;
}
