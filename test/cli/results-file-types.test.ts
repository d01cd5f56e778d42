import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { lines, runDrover } from '../helpers/drover.js';
import { hostileTaskScript, RESULT_FILE_KINDS } from '../helpers/hostile-files.js';
import { loginByLink, startUi } from '../helpers/ui.js';
import { tempWorkspace } from '../helpers/workspace.js';

/**
 * Issue 36 item 1: a task controls its $DROVER_RESULT_FILE and may make it any file type. Each kind (a FIFO,
 * /dev/zero, a unix socket, a directory, a symlink loop, a huge sparse file, a file over the 1 MiB cap) is a
 * null result with a warning naming it: `drover results` answers, and the dashboard's tasks page of the job
 * answers while the server keeps answering (/v1/ui/me). A hang is the failure here (each command gets a generous bound).
 */

test('results of every file type are null with a warning; the dashboard answers', {
  timeout: 120_000,
}, async (t) => {
  const cwd = tempWorkspace(t);
  const kinds = Object.keys(RESULT_FILE_KINDS);
  fs.writeFileSync(path.join(cwd, 'task.sh'), hostileTaskScript());
  const p = await runDrover(
    ['prelaunch', '+command', 'sh task.sh', '+jobname', 'f', '+pos-arg', ...kinds, '+q'],
    {
      cwd,
    },
  );
  assert.equal(p.code, 0, p.stderr);
  const l = await runDrover(['launch', '--jobname', 'f', '-q'], { cwd });
  assert.equal(l.code, 0, l.stderr);

  const r = await runDrover(['results', 'f', '--json'], { cwd });
  assert.equal(r.code, 0, r.stderr);
  const rows = JSON.parse(r.stdout) as { result: unknown }[];
  assert.deepEqual(
    rows.map((x) => x.result),
    kinds.map(() => null),
  );
  assert.equal(lines(r.stderr).length, 1, r.stderr);
  assert.match(r.stderr, new RegExp(`${kinds.length} tasks' results could not be used and are null`));
  const reasons: Record<string, RegExp> = {
    fifo: /1\.1\.result\.json is a FIFO, not a regular file/,
    zero: /2\.1\.result\.json is a character device, not a regular file/,
    socket: /3\.1\.result\.json (is a socket, not a regular file|cannot be read \(ENXIO\))/,
    dir: /4\.1\.result\.json is a directory, not a regular file/,
    loop: /5\.1\.result\.json cannot be read \(ELOOP\)/,
    sparse: /6\.1\.result\.json is 8589934592 bytes, more than 1 MiB/,
    big: /7\.1\.result\.json is \d+ bytes, more than 1 MiB/,
  };
  for (const [i, k] of kinds.entries()) {
    const one = await runDrover(['results', 'f', '--json', '--tasklist', String(i + 1)], { cwd });
    assert.equal(one.code, 0, one.stderr);
    assert.match(one.stderr, reasons[k]!, k);
  }
  const table = await runDrover(['results', 'f'], { cwd });
  assert.equal(table.code, 0, table.stderr);

  const { base, link } = await startUi(t, cwd);
  const session = await loginByLink(link);
  const pages = Promise.all([
    fetch(`${base}/v1/ui/jobs/f/tasks`, { headers: session, signal: AbortSignal.timeout(10_000) }),
    ...kinds.map((_, i) =>
      fetch(`${base}/v1/ui/jobs/f/tasks/${i + 1}`, {
        headers: session,
        signal: AbortSignal.timeout(10_000),
      }),
    ),
  ]);
  const health = await fetch(`${base}/v1/ui/me`, {
    headers: session,
    signal: AbortSignal.timeout(10_000),
  });
  assert.equal(health.status, 200);
  for (const page of await pages) assert.equal(page.status, 200, page.url);
  assert.equal(
    (await fetch(`${base}/v1/ui/me`, { headers: session, signal: AbortSignal.timeout(10_000) })).status,
    200,
  );
});
