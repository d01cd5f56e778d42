import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { childEnv, droverBin, droverJson, runDrover } from '../helpers/drover.js';
import { tempWorkspace } from '../helpers/workspace.js';

const VALID = 'job, task, state, exit, attempts, tag, params, command, duration, host, started';

function handJob(cwd: string, job: string, tasks: [string, string][]): void {
  const dir = path.join(cwd, '.drover', 'jobs', job);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(
    path.join(dir, 'jobs.json'),
    JSON.stringify(Object.fromEntries(tasks.map((t, i) => [String(i + 1), t]))),
  );
}

/** Columns of a line in a terminal, for the text these tests use: CJK and emoji 2, the rest 1. */
function width(line: string): number {
  let w = 0;
  for (const ch of line) w += /[\u4e00-\u9fff\u{1f300}-\u{1f64f}]/u.test(ch) ? 2 : 1;
  return w;
}

/** Split a table into its lines' cells (cells are separated by two or more spaces). */
function cells(stdout: string): string[][] {
  return stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => l.trim().split(/ {2,}/));
}

test('--columns picks and orders the columns; duration, host and started come from the latest attempt', async (t) => {
  const cwd = tempWorkspace(t);
  handJob(cwd, 'C', [
    ['sleep 0.1', 'first'],
    ['echo "a rather long command"', ''],
    ['true', 'never'],
  ]);
  const r = await runDrover(['launch', '--jobname', 'C', '--tasklist', '1-2', '-q'], { cwd });
  assert.equal(r.code, 0, r.stderr);
  const json = await droverJson<{ host: string | null; started_at: number | null }[]>(
    ['list', 'C', '--json'],
    {
      cwd,
    },
  );
  const out = await runDrover(['list', 'C', '--columns', 'task,duration,host,started,state'], { cwd });
  assert.equal(out.code, 0, out.stderr);
  const rows = cells(out.stdout);
  assert.deepEqual(rows[0], ['task', 'duration', 'host', 'started', 'state']);
  assert.equal(rows.length, 4);
  const started = (s: number) => new Date(Math.round(s * 1000)).toISOString().replace('T', ' ').slice(0, 19);
  for (const i of [0, 1]) {
    const row = rows[i + 1]!;
    assert.equal(row[0], String(i + 1));
    assert.match(row[1]!, /^\d+(ms|\.\ds)$/);
    assert.equal(row[2], json[i]!.host);
    assert.equal(row[3], started(json[i]!.started_at!));
    assert.equal(row[4], 'succeeded');
  }
  assert.deepEqual(rows[3], ['3', '-', '-', '-', 'pending']);
  // The command not last: padded like any column, so the column after it lines up.
  const mid = await runDrover(['list', 'C', '--columns', 'command,task'], { cwd });
  const lines = mid.stdout.split('\n').filter((l) => l !== '');
  const at = lines[0]!.indexOf('task');
  assert.ok(at > 'echo "a rather long command"'.length, lines[0]);
  assert.deepEqual(
    lines.slice(1).map((l) => l.slice(at)),
    ['1', '2', '3'],
  );
  assert.ok(
    lines.every((l) => !l.endsWith(' ')),
    JSON.stringify(lines),
  );
  // The default table is what it always was.
  const plain = cells((await runDrover(['list', 'C'], { cwd })).stdout);
  assert.deepEqual(plain[0], ['job', 'task', 'state', 'exit', 'attempts', 'tag', 'command']);
  // One column, the empty tag's row has nothing to print but its line (no trailing blank either).
  const picked = (await runDrover(['list', 'C', '--columns', 'tag'], { cwd })).stdout;
  assert.equal(picked, ' tag\n first\n\n never\n');
});

test('bad --columns: one line naming the bad name and the valid ones, exit 2, nothing printed', async (t) => {
  const cwd = tempWorkspace(t);
  handJob(cwd, 'B', [['true', '']]);
  const huge = 'x'.repeat(100_000);
  const bad: [string, RegExp][] = [
    ['nope', new RegExp(`'nope' is not a column: use some of ${VALID}`)],
    ['', /has an empty name/],
    ['task,', /has an empty name/],
    [',', /has an empty name/],
    ['task,task', /'task' is named twice/],
    ['Task', /'Task' is not a column/],
    ['--lr', /'--lr' is not a column/],
    ['ta\nsk', /'ta\\nsk' is not a column/],
    ['NaN', /'NaN' is not a column/],
    [huge, /'x+…' is not a column/],
  ];
  for (const [value, message] of bad) {
    const r = await runDrover(['list', 'B', '--columns', value], { cwd });
    assert.equal(r.code, 2, `${value.slice(0, 20)}: ${r.stderr}`);
    assert.match(r.stderr, message);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.ok(r.stderr.length < 400, 'the message does not echo a huge value whole');
    assert.equal(r.stdout, '');
  }
  for (const other of ['--json', '--attempts']) {
    const r = await runDrover(['list', 'B', '--columns', 'task', other], { cwd });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, new RegExp(`drop it with ${other}`));
  }
});

const haveScript = spawnSync('script', ['--version'], { encoding: 'utf8' }).status === 0;

/**
 * Run `drover list JOB` in a real pseudo-terminal `cols` wide (util-linux's script), its output's lines. The
 * values reach the shell script runs as variables, never as text of the script.
 */
function inTerminal(cwd: string, cols: number, job: string): string[] {
  const r = spawnSync(
    'script',
    ['-qec', 'stty cols "$COLS" rows 50 && exec "$NODE" "$DROVER" list "$JOB"', '/dev/null'],
    {
      cwd,
      encoding: 'utf8',
      env: { ...childEnv(), COLS: String(cols), NODE: process.execPath, DROVER: droverBin, JOB: job },
      timeout: 60_000,
    },
  );
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.split('\r\n').filter((l) => l !== '');
}

test('in a terminal the table fits its width (the command cut with …, no trailing blanks); piped it is whole', {
  skip: !haveScript && 'no script (util-linux)',
}, async (t) => {
  const cwd = tempWorkspace(t);
  const long = `python train.py ${'--flag value '.repeat(12)}--last 漢字🚀 end`;
  handJob(cwd, 'W', [
    [long, 'tagged'],
    ['short', ''],
    [`echo ${'漢'.repeat(40)}`, ''],
  ]);
  const lines = inTerminal(cwd, 80, 'W');
  assert.equal(lines.length, 4, JSON.stringify(lines));
  for (const l of lines) {
    assert.ok(width(l) <= 80, `${width(l)} columns: ${JSON.stringify(l)}`);
    assert.ok(!l.endsWith(' '), JSON.stringify(l));
  }
  assert.ok(lines[1]!.endsWith('…'));
  assert.ok(lines[1]!.includes('python train.py --flag'));
  assert.ok(lines[3]!.endsWith('…'));
  assert.ok(lines[2]!.endsWith(' short'), 'a command that fits is whole');
  const wide = inTerminal(cwd, 300, 'W');
  assert.ok(wide[1]!.endsWith(long), 'a wide terminal shows the whole command');
  const piped = await runDrover(['list', 'W'], { cwd });
  const pipedLines = piped.stdout.split('\n').filter((l) => l !== '');
  assert.ok(pipedLines[1]!.endsWith(long));
  assert.ok(!piped.stdout.includes('…'));
  assert.ok(pipedLines.every((l) => !l.endsWith(' ')));
});
