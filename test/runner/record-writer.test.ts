import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

/**
 * The record writer when the file refuses writes. A real write failure without root: a file size limit
 * (RLIMIT_FSIZE, set with prlimit) makes the kernel write part of a batch and then fail with EFBIG, as a disk
 * that fills up does; raising the limit from outside is the space coming back.
 */

const writerModule = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../src/runner/record-writer.js',
);

const SCRIPT = `
import { RecordWriter } from ${JSON.stringify(writerModule)};
const w = new RecordWriter(process.argv[2], {
  onBlocked: () => process.stdout.write('blocked\\n'),
  onResumed: () => process.stdout.write('resumed\\n'),
});
for (let i = 1; i <= 40; i++) w.write({ type: 'skip', task: i, at: 1000 + i, state: 'cancelled' });
process.on('SIGTERM', () => process.exit(3));
setInterval(() => {}, 1000);
`;

const all = Array.from(
  { length: 40 },
  (_, i) => `{"type":"skip","task":${i + 1},"at":${1001 + i},"state":"cancelled"}\n`,
);

function start(t: { after(fn: () => void): void }, limit: number) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-writer-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const script = path.join(dir, 'write.mjs');
  fs.writeFileSync(script, SCRIPT);
  const file = path.join(dir, 'g1.h.1.jsonl');
  const child = spawn('prlimit', [`--fsize=${limit}:unlimited`, process.execPath, script, file], {
    env: { ...process.env, TMPDIR: dir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.after(() => child.kill('SIGKILL'));
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => {
    stdout += d;
  });
  child.stderr!.on('data', (d) => {
    stderr += d;
  });
  let ended = false;
  const exit = new Promise<number | null>((resolve) =>
    child.on('close', (code) => {
      ended = true;
      resolve(code);
    }),
  );
  /**
   * Wait until the writer says it is blocked, or the process is gone (it did not survive the failure), or
   * 5 s passed (a writer that did not notice): the file shows what it did.
   */
  const blocked = () => until('blocked', () => stdout.includes('blocked') || ended, 5000).catch(() => {});
  return { dir, file, child, out: () => stdout, err: () => stderr, exit, blocked };
}

async function until(what: string, probe: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('a write the file refuses halfway leaves whole lines only, and the rest is written when it can be', async (t) => {
  const w = start(t, 1000);
  await w.blocked();
  const text = fs.readFileSync(w.file, 'utf8');
  assert.ok(text.endsWith('\n'), 'no half line: the part of a line that got out was cut off again');
  assert.ok(text.length <= 1000);
  assert.doesNotMatch(w.err(), /\n\s+at /, 'no stack trace');
  assert.equal(text, all.slice(0, text.split('\n').length - 1).join(''));
  assert.match(
    w.err(),
    new RegExp(
      `^drover: file too large at ${w.file} \\(write\\): keeping \\d+ record\\(s\\) in memory and trying again every second; no new task starts until they are written\\n$`,
    ),
  );
  // Space comes back: the retry timer writes the rest, in order, whole.
  execFileSync('prlimit', ['--pid', String(w.child.pid), '--fsize=unlimited:unlimited']);
  await until('resumed', () => w.out().includes('resumed'));
  assert.equal(fs.readFileSync(w.file, 'utf8'), all.join(''));
  assert.match(w.err(), /drover: records written again to /);
});

test('a process that exits while records wait saves them and says how to hand them over', async (t) => {
  const w = start(t, 1800);
  await w.blocked();
  w.child.kill('SIGTERM');
  assert.equal(await w.exit, 3);
  const spill = path.join(w.dir, `drover-unwritten-${path.basename(w.file)}`);
  assert.equal(fs.readFileSync(w.file, 'utf8') + fs.readFileSync(spill, 'utf8'), all.join(''));
  assert.ok(
    w.err().includes(`saved in ${spill}: once there is space, run: cat ${spill} >> ${w.file}`),
    w.err(),
  );
  assert.doesNotMatch(w.err(), /\n\s+at /, 'no stack trace');
});

test('records that cannot be saved either are said to be lost, and leave no partial file', async (t) => {
  const w = start(t, 600); // the saved copy needs more than 600 bytes too
  await w.blocked();
  w.child.kill('SIGTERM');
  assert.equal(await w.exit, 3);
  const text = fs.readFileSync(w.file, 'utf8');
  assert.ok(text.endsWith('\n'));
  const lost = 40 - (text.split('\n').length - 1);
  assert.ok(
    w
      .err()
      .includes(
        `drover: ${lost} record(s) could not be written to ${w.file} and are lost: their tasks will show lost`,
      ),
    w.err(),
  );
  assert.deepEqual(
    fs.readdirSync(w.dir).filter((f) => f.startsWith('drover-unwritten-')),
    [],
  );
});
