import assert from 'node:assert/strict';
import { test } from 'node:test';
import { lines, runDrover } from '../helpers/drover.js';
import { runMeasured } from '../helpers/measure.js';
import { tempWorkspace } from '../helpers/workspace.js';

/** Terminal columns of a character (the CJK characters used here take two). */
const width = (c: string) => (/[\u4e00-\u9fff]/.test(c) ? 2 : 1);

/** The character of `line` that starts at terminal column `col` (undefined inside a wide one, or past the end). */
function charAt(line: string, col: number): string | undefined {
  let used = 0;
  for (const c of line) {
    if (used === col) return c;
    used += width(c);
    if (used > col) return undefined;
  }
  return undefined;
}

/** Terminal column where `name` starts in the header. */
const startOf = (head: string, name: string) =>
  [...head.slice(0, head.indexOf(name))].reduce((n, c) => n + width(c), 0);

test('list prints aligned columns, wide characters included; a newline or tab stays on its line', async (t) => {
  const cwd = tempWorkspace(t);
  const values = ['a', 'bbbbbbbbbbbbbbbbbbbb', '学习率'];
  const pre = await runDrover(
    ['prelaunch', '+command', 'echo', '+jobname', 'T', '+arg', '--x', ...values, '+tag', '+q'],
    { cwd },
  );
  assert.equal(pre.code, 0, pre.stderr);
  const r = await runDrover(['list', 'T'], { cwd });
  assert.equal(r.code, 0, r.stderr);
  const [head, ...rows] = lines(r.stdout);
  assert.equal(rows.length, 3, r.stdout);
  for (const name of ['task', 'state', 'exit', 'attempts', 'tag', 'command']) {
    const col = startOf(head!, name);
    for (const row of rows) {
      assert.equal(charAt(row, col - 1), ' ', `a blank before column '${name}' in ${JSON.stringify(row)}`);
      assert.notEqual(
        charAt(row, col) ?? ' ',
        ' ',
        `column '${name}' starts aligned in ${JSON.stringify(row)}`,
      );
    }
  }
  assert.ok(
    rows.every((row) => !row.endsWith(' ')),
    'no trailing blanks after the last column',
  );

  const nl = await runDrover(['launch', '--command', 'printf "a\tb\nc"', '--jobname', 'N', '-q'], { cwd });
  assert.equal(nl.code, 0, nl.stderr);
  const n = await runDrover(['list', 'N'], { cwd });
  assert.equal(lines(n.stdout).length, 2, n.stdout);
  assert.ok(!n.stdout.includes('\t'), 'no raw tab');
  assert.match(n.stdout, /printf "a\\tb\\nc"/);
});

test('list of a big job is linear: 20,000 tasks answer well inside the hang guard', async (t) => {
  const cwd = tempWorkspace(t);
  const ids = Array.from({ length: 200 }, (_, i) => String(i));
  const seeds = Array.from({ length: 100 }, (_, i) => String(i));
  const pre = await runDrover(
    ['prelaunch', '+command', 'true', '+jobname', 'B', '+arg', '--a', ...ids, '+arg', '--s', ...seeds, '+q'],
    { cwd },
  );
  assert.equal(pre.code, 0, pre.stderr);
  // Quadratic, 16,000 tasks took 34 s; linear, 20,000 take well under a second (bench: local.list-100k).
  const r = await runMeasured(['list', 'B'], { cwd, countOnly: false, guardMs: 20_000 });
  assert.equal(r.hung, false, 'list answered (hang guard)');
  assert.equal(r.code, 0, r.stderr);
  assert.equal(lines(r.stdout).length, 20_001);
});
