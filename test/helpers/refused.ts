import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { lines, runDrover } from './drover.js';
import { ledgerDump, snapshot, tempWorkspace } from './workspace.js';

/**
 * A subtest: run drover and check it refused — exit 2, exactly one line on stderr that names the bad value
 * (`names`), and nothing on disk changed (file names and sizes, and every row of the ledger).
 */
export async function refused(
  t: TestContext,
  cwd: string,
  args: string[],
  names: RegExp | string,
): Promise<void> {
  await t.test(args.map((a) => JSON.stringify(a)).join(' '), async () => {
    const files = snapshot(cwd);
    const ledger = ledgerDump(cwd);
    const r = await runDrover(args, { cwd });
    assert.equal(r.code, 2, `exit code; stderr: ${r.stderr}`);
    assert.equal(lines(r.stderr).length, 1, `exactly one line on stderr, got:\n${r.stderr}`);
    if (typeof names === 'string') assert.ok(r.stderr.includes(names), `stderr names ${names}: ${r.stderr}`);
    else assert.match(r.stderr, names);
    assert.deepEqual(snapshot(cwd), files, 'files under the folder unchanged');
    assert.deepEqual(ledgerDump(cwd), ledger, 'ledger unchanged');
  });
}

/** A folder with job J of 3 tasks (`true`), launched once to its end. */
export async function folderWithJob(t: TestContext): Promise<string> {
  const cwd = tempWorkspace(t);
  const pre = await runDrover(
    ['prelaunch', '+command', 'true', '+jobname', 'J', '+pos-arg', '1', '2', '3', '+q'],
    {
      cwd,
    },
  );
  assert.equal(pre.code, 0, pre.stderr);
  const launch = await runDrover(['launch', '--jobname', 'J', '-q'], { cwd });
  assert.equal(launch.code, 0, launch.stderr);
  return cwd;
}
