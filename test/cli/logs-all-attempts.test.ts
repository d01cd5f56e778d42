import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { runDrover } from '../helpers/drover.js';
import { scriptJob } from '../helpers/script-job.js';
import type { tempWorkspace } from '../helpers/workspace.js';

/**
 * `drover logs J T --all-attempts`: every attempt of a task, oldest first, each after a line naming it and how it
 * ended — a retried (later: requeued) task read as one story — in both ways of keeping output.
 */

async function retried(t: Parameters<typeof tempWorkspace>[0], logs: string): Promise<string> {
  const cwd = await scriptJob(
    t,
    'echo "try $DROVER_ATTEMPT"; echo "err $DROVER_ATTEMPT" >&2; [ "$DROVER_ATTEMPT" -ge 3 ] || exit 4\n',
    'A',
    ['x', 'y'],
  );
  // Task 1 (x) fails twice and then succeeds; task 2 (y) is never launched.
  const l = await runDrover(
    ['launch', 'A', '--tasklist', '1', '--retries', '2', '--retry-delay', '0.1', '--logs', logs, '-q'],
    { cwd },
  );
  assert.equal(l.code, 0, l.stderr);
  return cwd;
}

for (const logs of ['files', 'segments']) {
  test(`logs --all-attempts prints each attempt in turn after a line naming it (${logs})`, async (t) => {
    const cwd = await retried(t, logs);
    const out = await runDrover(['logs', 'A', '1', '--all-attempts'], { cwd });
    assert.equal(out.code, 0, out.stderr);
    assert.equal(
      out.stdout,
      '==> attempt 1: failed <==\ntry 1\n==> attempt 2: failed <==\ntry 2\n==> attempt 3: succeeded <==\ntry 3\n',
    );
    assert.equal(out.stderr, '');
    const err = await runDrover(['logs', 'A', '1', '--all-attempts', '--err'], { cwd });
    assert.equal(
      err.stdout,
      '==> attempt 1: failed <==\nerr 1\n==> attempt 2: failed <==\nerr 2\n==> attempt 3: succeeded <==\nerr 3\n',
    );
    // Without it, the latest attempt only, as before.
    assert.equal((await runDrover(['logs', 'A', '1'], { cwd })).stdout, 'try 3\n');
  });
}

test('logs --all-attempts: a log gone is said and the others printed (exit 1); bad combinations exit 2', async (t) => {
  const cwd = await retried(t, 'files');
  const where = await runDrover(['logs', 'A', '1', '--attempt', '2', '--path'], { cwd });
  assert.equal(where.code, 0, where.stderr);
  fs.rmSync(where.stdout.trim());
  const r = await runDrover(['logs', 'A', '1', '--all-attempts'], { cwd });
  assert.equal(r.code, 1, r.stderr);
  assert.equal(
    r.stdout,
    '==> attempt 1: failed <==\ntry 1\n==> attempt 2: failed <==\n==> attempt 3: succeeded <==\ntry 3\n',
  );
  assert.match(r.stderr, /^drover: task 1 attempt 2: its log .*1\.2\.out is gone\n$/);
  for (const extra of [['--follow'], ['--attempt', '1'], ['--path']]) {
    const bad = await runDrover(['logs', 'A', '1', '--all-attempts', ...extra], { cwd });
    assert.equal(bad.code, 2, `${extra.join(' ')}: ${bad.stderr}`);
    assert.equal(bad.stdout, '');
    assert.match(bad.stderr, new RegExp(`^drover: (error: )?--all-attempts .*drop ${extra[0]}[^\\n]*\\n$`));
  }
  const never = await runDrover(['logs', 'A', '2', '--all-attempts'], { cwd });
  assert.equal(never.code, 2, never.stderr);
  assert.match(never.stderr, /task 2 of 'A' has no attempt yet/);
  assert.equal(never.stdout, '');
});
