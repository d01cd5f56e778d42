import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import { parseCsv, parseTsv, undoInert } from '../helpers/delimited.js';
import { droverJson, runDrover } from '../helpers/drover.js';
import { tempWorkspace } from '../helpers/workspace.js';

const HEAD = [
  'job',
  'task',
  'state',
  'exit_code',
  'attempts',
  'started_at',
  'ended_at',
  'duration_s',
  'host',
  'tag',
  'command',
];

/** Write a job's jobfile by hand (as onager or an editor would): any command and tag text. */
function handJob(cwd: string, job: string, tasks: [string, string][]): void {
  const dir = path.join(cwd, '.drover', 'jobs', job);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(
    path.join(dir, 'jobs.json'),
    JSON.stringify(Object.fromEntries(tasks.map((t, i) => [String(i + 1), t]))),
  );
}

interface Listed {
  task: number;
  state: string;
  exit_code: number | null;
  attempts: number;
  started_at: number | null;
  ended_at: number | null;
  duration_s: number | null;
  host: string | null;
  tag: string;
  command: string;
}

test('list --csv and --tsv: the contract’s columns, one line per task, the same values as list --json', async (t) => {
  const cwd = tempWorkspace(t);
  handJob(cwd, 'E', [
    ['exit 0', 'ok'],
    ['exit 4', 'four, "quoted"'],
    ['echo never', ''],
  ]);
  const r = await runDrover(['launch', '--jobname', 'E', '--tasklist', '1-2', '-q'], { cwd });
  assert.equal(r.code, 1, r.stderr);
  const json = await droverJson<Listed[]>(['list', 'E', '--json'], { cwd });
  const csv = await runDrover(['list', 'E', '--csv'], { cwd });
  const tsv = await runDrover(['list', 'E', '--tsv'], { cwd });
  for (const [out, rows] of [
    [csv, parseCsv(csv.stdout)],
    [tsv, parseTsv(tsv.stdout)],
  ] as const) {
    assert.equal(out.code, 0, out.stderr);
    assert.deepEqual(rows[0], HEAD);
    assert.equal(rows.length, 4);
    rows.slice(1).forEach((row, i) => {
      const j = json[i]!;
      const iso = (s: number | null) => (s === null ? '' : new Date(Math.round(s * 1000)).toISOString());
      assert.deepEqual(row, [
        'E',
        String(j.task),
        j.state,
        j.exit_code === null ? '' : String(j.exit_code),
        String(j.attempts),
        iso(j.started_at),
        iso(j.ended_at),
        j.duration_s === null ? '' : String(j.duration_s),
        j.host ?? '',
        j.tag,
        j.command,
      ]);
    });
  }
  const rows = parseCsv(csv.stdout);
  assert.deepEqual(
    rows.slice(1).map((row) => [row[2], row[3]]),
    [
      ['succeeded', '0'],
      ['failed', '4'],
      ['pending', ''],
    ],
  );
  assert.match(rows[1]![5]!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  assert.match(csv.stdout, /,"four, ""quoted""",/);
  // Every job: the job column tells them apart; an empty folder prints the header alone.
  handJob(cwd, 'F', [['true', '']]);
  const all = parseCsv((await runDrover(['list', '--csv'], { cwd })).stdout);
  assert.deepEqual(
    all.slice(1).map((row) => [row[0], row[1]]),
    [
      ['E', '1'],
      ['E', '2'],
      ['E', '3'],
      ['F', '1'],
    ],
  );
  const filtered = parseCsv(
    (await runDrover(['list', 'E', '--csv', '--state', 'failed,pending'], { cwd })).stdout,
  );
  assert.deepEqual(
    filtered.slice(1).map((row) => row[1]),
    ['2', '3'],
  );
  const bare = tempWorkspace(t);
  const head = await runDrover(['list', '--tsv'], { cwd: bare });
  assert.equal(head.code, 0, head.stderr);
  assert.equal(head.stdout, `${HEAD.join('\t')}\n`);
});

test('list --csv reads back the same through Python’s csv module', {
  skip: spawnSync('python3', ['-V']).status !== 0 && 'no python3',
}, async (t) => {
  const cwd = tempWorkspace(t);
  const texts = [
    'a,b',
    'say "hi"',
    'two\nlines',
    'cr\r\nlf',
    'tab\there',
    'back\\slash',
    'é 漢字 🚀',
    ' padded ',
    '=1+1',
  ];
  handJob(
    cwd,
    'P',
    texts.map((s, i) => [`echo ${s}`, texts[texts.length - 1 - i]!]),
  );
  const csv = await runDrover(['list', 'P', '--csv'], { cwd });
  assert.equal(csv.code, 0, csv.stderr);
  const file = path.join(cwd, 'out.csv');
  fs.writeFileSync(file, csv.stdout);
  const py = spawnSync(
    'python3',
    [
      '-c',
      'import csv, json, sys\nwith open(sys.argv[1], newline="", encoding="utf-8") as f: print(json.dumps(list(csv.reader(f))))',
      file,
    ],
    { encoding: 'utf8' },
  );
  assert.equal(py.status, 0, py.stderr);
  const rows = JSON.parse(py.stdout) as string[][];
  assert.deepEqual(rows[0], HEAD);
  assert.deepEqual(
    rows.slice(1).map((row) => [row[10], undoInert(row[9]!)]),
    texts.map((s, i) => [`echo ${s}`, texts[texts.length - 1 - i]]),
  );
  assert.deepEqual(rows, parseCsv(csv.stdout));
});

/**
 * Text a careless or hostile jobfile might hold: separators, quotes, line breaks, escapes, formula starts, any
 * code point.
 */
const nasty = fc
  .array(
    fc.oneof(
      fc.constantFrom(
        ',',
        '"',
        "'",
        '\n',
        '\r',
        '\r\n',
        '\t',
        '\\',
        '\\t',
        '\\n',
        ' ',
        '\u0000',
        'é',
        '漢',
        '🚀',
        '\u200d',
        '=',
        '+',
        '-',
        '@',
        '-1.5',
        '--lr',
      ),
      fc.string({ unit: 'binary', maxLength: 3 }),
    ),
    { maxLength: 12 },
  )
  .map((parts) => parts.join(''));

test('any command and tag text survives --csv and --tsv, parsed back (property)', async (t) => {
  const cwd = tempWorkspace(t);
  let run = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(fc.tuple(nasty, nasty), { minLength: 1, maxLength: 6 }), async (tasks) => {
      const job = `J${++run}`;
      handJob(cwd, job, tasks);
      for (const [flag, parse] of [
        ['--csv', parseCsv],
        ['--tsv', parseTsv],
      ] as const) {
        const r = await runDrover(['list', job, flag], { cwd });
        assert.equal(r.code, 0, r.stderr);
        const rows = parse(r.stdout).map((row) => row.map(undoInert));
        assert.equal(rows.length, tasks.length + 1);
        assert.deepEqual(
          rows.slice(1).map((row) => [row[10], row[9]]),
          tasks.map(([command, tag]) => [command, tag]),
        );
        assert.ok(rows.every((row) => row.length === HEAD.length));
      }
    }),
    { numRuns: 15 },
  );
});

test('bad output flags: one line naming them, exit 2, nothing on stdout', async (t) => {
  const cwd = tempWorkspace(t);
  handJob(cwd, 'B', [['true', '']]);
  const bad: [string[], RegExp][] = [
    [['list', 'B', '--csv', '--json'], /--json and --csv are two outputs/],
    [['list', 'B', '--csv', '--tsv'], /--csv and --tsv are two outputs/],
    [['list', 'B', '--tsv', '--attempts'], /--attempts prints a table or --json, not --tsv/],
    [['list', 'B', '--csv', '--columns', 'task'], /--columns picks the table's columns: drop it with --csv/],
    [['list', 'B', '--csv', '--tasklist', '0'], /0/],
    [['list', 'nosuch', '--csv'], /nosuch/],
  ];
  for (const [args, message] of bad) {
    const r = await runDrover(args, { cwd });
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.equal(r.stdout, '');
  }
});
