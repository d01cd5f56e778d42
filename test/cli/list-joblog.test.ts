import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { runDrover } from '../helpers/drover.js';
import { tempWorkspace } from '../helpers/workspace.js';

/**
 * `list --joblog FILE` against a joblog GNU parallel itself wrote for the same commands: the same header, the
 * same columns in the same order, each column in parallel's format, and the same Seq, Host, Send, Receive,
 * Exitval, Signal and Command (the times differ, of course). Skips with a notice where parallel is missing,
 * except in CI, which installs it (.ci/run).
 */
const haveParallel = spawnSync('parallel', ['--version'], { encoding: 'utf8' }).stdout?.includes(
  'GNU parallel',
);
const skip = haveParallel || process.env.CI ? false : 'no GNU parallel: apt-get install parallel';

const COMMANDS = ['echo a', 'exit 3', 'kill -TERM $$', 'printf abc', 'echo "x,y" \'q\'', 'kill -9 $$'];

/** The columns' formats, as parallel writes them. */
const FORMAT: RegExp[] = [
  /^\d+$/,
  /^:$/,
  /^\d+\.\d{3}$/,
  /^ *\d+\.\d{3}$/,
  /^\d+$/,
  /^\d+$/,
  /^\d+$/,
  /^\d+$/,
  /./,
];

function parse(text: string): { head: string; rows: string[][] } {
  const lines = text.split('\n');
  assert.equal(lines.at(-1), '', 'the joblog ends with a line end');
  return { head: lines[0]!, rows: lines.slice(1, -1).map((l) => l.split('\t')) };
}

test('--joblog writes what GNU parallel --joblog writes for the same commands', { skip }, async (t) => {
  const cwd = tempWorkspace(t);
  const parallelLog = path.join(cwd, 'parallel.log');
  const p = spawnSync('parallel', ['--will-cite', '-j1', '--joblog', parallelLog, ':::', ...COMMANDS], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, PARALLEL_SHELL: '/bin/sh' },
  });
  assert.ok(fs.existsSync(parallelLog), p.stderr);
  const jobs = Object.fromEntries(COMMANDS.map((c, i) => [String(i + 1), [c, '']]));
  fs.mkdirSync(path.join(cwd, '.drover', 'jobs', 'P'), { recursive: true });
  fs.writeFileSync(path.join(cwd, '.drover', 'jobs', 'P', 'jobs.json'), JSON.stringify(jobs));
  const r = await runDrover(['launch', '--jobname', 'P', '--max-tasks', '1', '-q'], { cwd });
  assert.equal(r.code, 1, r.stderr); // two tasks fail, as in parallel
  const droverLog = path.join(cwd, 'drover.log');
  const jl = await runDrover(['list', 'P', '--joblog', droverLog], { cwd });
  assert.equal(jl.code, 0, jl.stderr);
  assert.equal(jl.stdout, '');

  const want = parse(fs.readFileSync(parallelLog, 'utf8'));
  const got = parse(fs.readFileSync(droverLog, 'utf8'));
  assert.equal(got.head, want.head);
  assert.equal(got.head, 'Seq\tHost\tStarttime\tJobRuntime\tSend\tReceive\tExitval\tSignal\tCommand');
  assert.equal(got.rows.length, COMMANDS.length);
  const bySeq = (rows: string[][]) => [...rows].sort((a, b) => Number(a[0]) - Number(b[0]));
  const [w, g] = [bySeq(want.rows), bySeq(got.rows)];
  for (let i = 0; i < COMMANDS.length; i++) {
    assert.equal(g[i]!.length, 9, `line ${i + 1}: ${JSON.stringify(g[i])}`);
    g[i]!.forEach((cell, c) => {
      assert.match(cell, FORMAT[c]!, `drover's column ${c + 1} of line ${i + 1}`);
      assert.match(w[i]![c]!, FORMAT[c]!, `parallel's column ${c + 1} of line ${i + 1}`);
    });
    assert.ok(g[i]![3]!.length >= 10, 'JobRuntime is padded to 10 as parallel pads it');
    // Seq, Host, Send, Receive, Exitval, Signal, Command: the same values.
    for (const c of [0, 1, 4, 5, 6, 7, 8])
      assert.equal(g[i]![c], w[i]![c], `column ${want.head.split('\t')[c]} of ${COMMANDS[i]}`);
  }
  // Not a column that cannot fail: the commands end differently, and both logs say so.
  assert.deepEqual(
    g.map((row) => [row[6], row[7]]),
    [
      ['0', '0'],
      ['3', '0'],
      ['0', '15'],
      ['0', '0'],
      ['0', '0'],
      ['0', '9'],
    ],
  );
});

test('--joblog replaces FILE whole, leaves it as it was on an error, and refuses bad paths with exit 2', async (t) => {
  const cwd = tempWorkspace(t);
  fs.mkdirSync(path.join(cwd, '.drover', 'jobs', 'J'), { recursive: true });
  fs.writeFileSync(
    path.join(cwd, '.drover', 'jobs', 'J', 'jobs.json'),
    JSON.stringify({ 1: ['true', ''], 2: ['false', ''] }),
  );
  const file = path.join(cwd, 'log.tsv');
  fs.writeFileSync(file, 'old\n');
  const before = fs.readdirSync(cwd).sort();
  const bad: [string[], RegExp][] = [
    [['list', 'nosuch', '--joblog', file], /nosuch/],
    [['list', '--joblog', file], /--joblog needs a job/],
    [['list', 'J', '--joblog', ''], /--joblog '' names no file/],
    [['list', 'J', '--joblog', cwd], /is a folder/],
    [['list', 'J', '--joblog', path.join(cwd, 'no', 'such', 'x.log')], /does not exist: create it first/],
    [['list', 'J', '--joblog', `${file}\n`], /control characters/],
    [['list', 'J', '--joblog', file, '--csv'], /--csv and --joblog are two outputs|--joblog and --csv/],
    [['list', 'J', '--joblog', file, '--attempts'], /--attempts/],
    [['list', 'J', '--joblog', file, '--tasklist', '9'], /9/],
    [['list', 'J', '--joblog', file, '--state', 'nope'], /nope/],
  ];
  for (const [args, message] of bad) {
    const r = await runDrover(args, { cwd });
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.equal(r.stdout, '');
    assert.equal(fs.readFileSync(file, 'utf8'), 'old\n', `${args.join(' ')} touched the file`);
  }
  assert.deepEqual(fs.readdirSync(cwd).sort(), before, 'no temp file left behind');
  // Nothing ran yet: a header alone, replacing the old text.
  const empty = await runDrover(['list', 'J', '--joblog', file], { cwd });
  assert.equal(empty.code, 0, empty.stderr);
  assert.equal(
    fs.readFileSync(file, 'utf8'),
    'Seq\tHost\tStarttime\tJobRuntime\tSend\tReceive\tExitval\tSignal\tCommand\n',
  );
  const r = await runDrover(['launch', '--jobname', 'J', '-q'], { cwd });
  assert.equal(r.code, 1, r.stderr);
  const out = await runDrover(['list', 'J', '--joblog', '-'], { cwd });
  assert.equal(out.code, 0, out.stderr);
  const rows = parse(out.stdout).rows;
  assert.deepEqual(
    rows.map((row) => [row[0], row[6], row[8]]),
    [
      ['1', '0', 'true'],
      ['2', '1', 'false'],
    ],
  );
  assert.deepEqual(fs.readdirSync(cwd).sort(), before);
});
