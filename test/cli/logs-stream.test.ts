import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { runDrover } from '../helpers/drover.js';
import { runMeasured } from '../helpers/measure.js';
import { tempWorkspace } from '../helpers/workspace.js';

/**
 * Issue 9 §5: `drover logs` read the whole log into memory (252 MB for a 200 MB log) and called a log over
 * 2 GiB "gone". Logs are streamed in constant memory, any size, with and without --follow.
 */

const MIB = 2 ** 20;

/** A folder with job L of one finished task, and the path of its stdout log. */
async function oneLog(t: Parameters<typeof tempWorkspace>[0]): Promise<{ cwd: string; log: string }> {
  const cwd = tempWorkspace(t);
  const pre = await runDrover(['prelaunch', '+command', 'echo hello', '+jobname', 'L', '+q'], { cwd });
  assert.equal(pre.code, 0, pre.stderr);
  // A file of its own, to grow by hand (a slice of a segment has its recorded end).
  const l = await runDrover(['launch', '--jobname', 'L', '--logs', 'files', '-q'], { cwd });
  assert.equal(l.code, 0, l.stderr);
  const p = await runDrover(['logs', 'L', '1', '--path'], { cwd });
  assert.equal(p.code, 0, p.stderr);
  return { cwd, log: p.stdout.trim() };
}

test('a 200 MB log is printed whole in constant memory, with and without --follow', async (t) => {
  const { cwd, log } = await oneLog(t);
  // A sparse file: 200 MB to read, nothing to write to disk first.
  fs.writeFileSync(log, 'first line\n');
  fs.truncateSync(log, 200 * MIB);
  fs.appendFileSync(log, 'last line\n');
  const size = fs.statSync(log).size;
  for (const extra of [[], ['--follow']]) {
    const r = await runMeasured(['logs', 'L', '1', ...extra], { cwd, countOnly: true, guardMs: 60_000 });
    assert.equal(r.hung, false, 'it finished (hang guard)');
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdoutBytes, size, `every byte of the log (${extra.join(' ')})`);
    assert.ok(r.peakMib < 150, `peak memory ${r.peakMib.toFixed(0)} MiB for a 200 MiB log`);
  }
});

test('a log over 2 GiB is printed, not reported gone; a reader that stops early ends it quietly', async (t) => {
  const { cwd, log } = await oneLog(t);
  fs.truncateSync(log, 2 ** 31 + MIB);
  const r = await runMeasured(['logs', 'L', '1'], { cwd, closeAfterBytes: 4 * MIB });
  assert.equal(r.hung, false, 'it ended when its reader went away (hang guard)');
  assert.ok(r.stdoutBytes >= 4 * MIB, `printed ${r.stdoutBytes} bytes`);
  assert.doesNotMatch(r.stderr, /gone/);
  assert.equal(r.stderr, '', 'nothing on stderr');
  assert.equal(r.code, 0);
  // A log that really is gone still says so, in one line, exit 2.
  fs.rmSync(log);
  const gone = await runDrover(['logs', 'L', '1'], { cwd });
  assert.equal(gone.code, 2);
  assert.match(gone.stderr, /^drover: log file .* is gone/);
  assert.equal(gone.stderr.trim().split('\n').length, 1);
});
