import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { parseCsv as readCsv } from '../helpers/delimited.js';
import { droverJson, droverOk, lines, runDrover } from '../helpers/drover.js';
import { snapshot, tempWorkspace } from '../helpers/workspace.js';

/**
 * `drover results` (issue 12, item 3) on the local backend: what tasks leave in $DROVER_RESULT_FILE or, with
 * `launch --result stdout`, on their last JSON line of stdout; the table, --json, --csv, --sort and --best; and
 * what careless or hostile input and result files do.
 */

interface ResultJson {
  task: number;
  state: string;
  tag: string;
  params: Record<string, string>;
  duration_s: number | null;
  result: Record<string, unknown> | null;
}

async function ok(cwd: string, args: string[]): Promise<string> {
  return await droverOk(args, { cwd });
}

/** A job `J` of tasks `sh task.sh <value>` whose script is `body`, run to its end on the local backend. */
async function ran(cwd: string, body: string, values: string[], launchArgs: string[] = []): Promise<void> {
  fs.writeFileSync(path.join(cwd, 'task.sh'), body);
  await ok(cwd, ['prelaunch', '+command', 'sh task.sh', '+jobname', 'J', '+pos-arg', ...values, '+q']);
  const r = await runDrover(['launch', '--jobname', 'J', '-q', ...launchArgs], { cwd });
  assert.ok(r.code === 0 || r.code === 1, r.stderr);
}

/** results --csv read by the tests' RFC 4180 reader, its records ending in CRLF (line breaks inside quotes aside). */
function parseCsv(text: string): string[][] {
  assert.ok(text.endsWith('\r\n'), 'the CSV ends with a CRLF');
  assert.doesNotMatch(text.replace(/"(?:[^"]|"")*"/g, ''), /(^|[^\r])\n/, 'every record ends with a CRLF');
  return readCsv(text);
}

test("--result stdout: what a task's daemonised child prints later is no later task's result", async (t) => {
  // Issue 36 item 4: task 1 leaves a process in a session of its own that prints {"loss": 999} while task 2 runs
  // in the same slot; task 2's result is its own, and --best never picks the stray line.
  const cwd = tempWorkspace(t);
  const body = `if [ "$1" = 1 ]; then
  (setsid sh -c ': > left; sleep 0.5; echo "{\\"loss\\": 999}"' &)
  until [ -e left ]; do sleep 0.01; done
  echo '{"loss": 5}'
else
  sleep 1.5; echo '{"loss": 7}'
fi
`;
  await ran(cwd, body, ['1', '2'], ['--result', 'stdout', '--max-tasks', '1']);
  const rows = await droverJson<ResultJson[]>(['results', 'J', '--json'], { cwd });
  assert.deepEqual(
    rows.map((r) => [r.task, r.result]),
    [
      [1, { loss: 5 }],
      [2, { loss: 7 }],
    ],
  );
  const best = await droverJson<ResultJson>(['results', 'J', '--best', 'loss:max', '--json'], { cwd });
  assert.deepEqual([best.task, best.result], [2, { loss: 7 }]);
  assert.equal((await runDrover(['logs', 'J', '2'], { cwd })).stdout, '{"loss": 7}\n');
});

test('--result stdout takes the last stdout line that is a JSON object', async (t) => {
  const cwd = tempWorkspace(t);
  const body = `echo '{"loss": 9}'
echo "step 1 of $1"
printf '{"loss": %s, "note": "last"}\\n' "$1"
echo 'not json {'
echo '[1, 2]'
`;
  await ran(cwd, body, ['3', '1', '2'], ['--result', 'stdout']);
  const rows = await droverJson<ResultJson[]>(['results', 'J', '--json'], { cwd });
  assert.deepEqual(
    rows.map((r) => [r.task, r.state, r.params, r.result]),
    [
      [1, 'succeeded', { pos1: '3' }, { loss: 3, note: 'last' }],
      [2, 'succeeded', { pos1: '1' }, { loss: 1, note: 'last' }],
      [3, 'succeeded', { pos1: '2' }, { loss: 2, note: 'last' }],
    ],
  );
  const best = await droverJson<ResultJson>(['results', 'J', '--best', 'loss', '--json'], { cwd });
  assert.equal(best.task, 2);
  // The same job launched again with the default (--result file) and no file written: no results.
  await ok(cwd, ['launch', '--jobname', 'J', '-q']);
  const again = await droverJson<ResultJson[]>(['results', 'J', '--json'], { cwd });
  assert.deepEqual(
    again.map((r) => r.result),
    [null, null, null],
  );
});

test('the table and --csv: task, state, params, duration_s, flattened result fields; CSV parses back', async (t) => {
  const cwd = tempWorkspace(t);
  const body = `case $1 in
  a) printf '%s\\n' '{"loss": 0.5, "metrics": {"acc": 0.9, "f1": 0.8}, "note": "with, comma and \\"quotes\\"\\nnewline"}' > "$DROVER_RESULT_FILE";;
  b) echo '{"loss": 0.25, "metrics": {"acc": 0.7}, "list": [1, 2]}' > "$DROVER_RESULT_FILE";;
  c) exit 3;;
esac
`;
  await ran(cwd, body, ['a', 'b', 'c']);
  const csv = await ok(cwd, ['results', 'J', '--csv']);
  const rows = parseCsv(csv);
  assert.deepEqual(rows[0], [
    'task',
    'state',
    'pos1',
    'duration_s',
    'loss',
    'metrics.acc',
    'metrics.f1',
    'note',
    'list',
  ]);
  const byTask = rows.slice(1).map((r) => [r[0], r[1], r[2], ...r.slice(4)]);
  assert.deepEqual(byTask, [
    ['1', 'succeeded', 'a', '0.5', '0.9', '0.8', 'with, comma and "quotes"\nnewline', ''],
    ['2', 'succeeded', 'b', '0.25', '0.7', '', '', '[1,2]'],
    ['3', 'failed', 'c', '', '', '', '', ''],
  ]);
  for (const r of rows.slice(1)) assert.ok(Number(r[3]) >= 0, `duration ${r[3]}`);
  // The table: aligned columns, control characters escaped, - where there is nothing.
  const table = lines(await ok(cwd, ['results', 'J']));
  assert.equal(table.length, 4);
  const head = table[0]!;
  assert.match(
    head,
    /^ task {3,}state {3,}pos1 {3,}duration_s {3,}loss {3,}metrics\.acc {3,}metrics\.f1 {3,}note {3,}list$/,
  );
  const at = head.indexOf('loss');
  assert.deepEqual(
    table.slice(1).map((l) => l.slice(at).split(/\s+/)[0]),
    ['0.5', '0.25', '-'],
  );
  assert.ok(table[1]!.includes('with, comma and "quotes"\\nnewline'));
  assert.ok(table.every((l) => !l.endsWith(' ')));
  // --sort by a nested field, descending; --best by max; the best row as CSV.
  const sorted = parseCsv(await ok(cwd, ['results', 'J', '--csv', '--sort', 'metrics.acc:desc']));
  assert.deepEqual(
    sorted.slice(1).map((r) => r[0]),
    ['1', '2', '3'],
  );
  const asc = parseCsv(await ok(cwd, ['results', 'J', '--csv', '--sort', 'loss']));
  assert.deepEqual(
    asc.slice(1).map((r) => r[0]),
    ['2', '1', '3'],
  );
  const best = parseCsv(await ok(cwd, ['results', 'J', '--csv', '--best', 'metrics.acc:max']));
  assert.deepEqual(
    best.map((r) => r[0]),
    ['task', '1'],
  );
  // --state and --tasklist filter.
  const failed = await droverJson<ResultJson[]>(['results', 'J', '--json', '--state', 'failed'], { cwd });
  assert.deepEqual(
    failed.map((r) => [r.task, r.result]),
    [[3, null]],
  );
  const some = await droverJson<ResultJson[]>(['results', 'J', '--json', '--tasklist', '2-3'], { cwd });
  assert.deepEqual(
    some.map((r) => r.task),
    [2, 3],
  );
});

test('--best: ties go to the lowest id, non-numbers are passed over, params count as numbers, nothing is null', async (t) => {
  const cwd = tempWorkspace(t);
  const body = `case $1 in
  0.5) echo '{"loss": 2}' > "$DROVER_RESULT_FILE";;
  0.25) echo '{"loss": 1}' > "$DROVER_RESULT_FILE";;
  1e-1) echo '{"loss": 1}' > "$DROVER_RESULT_FILE";;
  x) echo '{"loss": "0.1"}' > "$DROVER_RESULT_FILE";;
  y) echo '{"loss": null}' > "$DROVER_RESULT_FILE";;
esac
`;
  await ran(cwd, body, ['0.5', '0.25', '1e-1', 'x', 'y']);
  const best = await droverJson<ResultJson>(['results', 'J', '--best', 'loss', '--json'], { cwd });
  assert.deepEqual([best.task, best.result], [2, { loss: 1 }]);
  const max = await droverJson<ResultJson>(['results', 'J', '--best', 'loss:max', '--json'], { cwd });
  assert.equal(max.task, 1);
  // pos1 is text; 1e-1 is the least number among them ("x" and "y" are not numbers).
  const byParam = await droverJson<ResultJson>(['results', 'J', '--best', 'pos1', '--json'], { cwd });
  assert.equal(byParam.task, 3);
  const byTask = await droverJson<ResultJson>(['results', 'J', '--best', 'task:max', '--json'], { cwd });
  assert.equal(byTask.task, 5);
  // No finite number anywhere: null, a line saying so, exit 1.
  fs.writeFileSync(path.join(cwd, 'task.sh'), 'echo \'{"acc": "high"}\' > "$DROVER_RESULT_FILE"\n');
  await ok(cwd, ['prelaunch', '+command', 'sh task.sh', '+jobname', 'N', '+pos-arg', 'a', '+q']);
  await ok(cwd, ['launch', '--jobname', 'N', '-q']);
  const none = await runDrover(['results', 'N', '--best', 'acc', '--json'], { cwd });
  assert.equal(none.code, 1);
  assert.equal(none.stdout, 'null\n');
  assert.match(none.stderr, /^drover: no task of job 'N' has a number in acc yet/);
});

test('result files that are not a JSON object, too big, too deep or unreadable are null, with one summary line', async (t) => {
  const cwd = tempWorkspace(t);
  const body = `case $1 in
  good) echo '{"loss": 1}' > "$DROVER_RESULT_FILE";;
  array) echo '[1]' > "$DROVER_RESULT_FILE";;
  nan) echo '{"loss": NaN}' > "$DROVER_RESULT_FILE";;
  big) head -c 1100000 /dev/zero | tr '\\0' ' ' > "$DROVER_RESULT_FILE"; echo '{}' >> "$DROVER_RESULT_FILE";;
  deep) python3 -c 'print("{\\"a\\":" * 40 + "1" + "}" * 40)' > "$DROVER_RESULT_FILE";;
  dir) mkdir "$DROVER_RESULT_FILE";;
  none) ;;
esac
`;
  await ran(cwd, body, ['good', 'array', 'nan', 'big', 'deep', 'dir', 'none']);
  const r = await runDrover(['results', 'J', '--json'], { cwd });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(
    (JSON.parse(r.stdout) as ResultJson[]).map((x) => x.result),
    [{ loss: 1 }, null, null, null, null, null, null],
  );
  const warnings = lines(r.stderr);
  assert.equal(warnings.length, 1, r.stderr);
  assert.match(
    warnings[0]!,
    /^drover: warning: 5 tasks' results could not be used and are null \(task 2: .*\/2\.1\.result\.json is not a JSON object, \.\.\.\)$/,
  );
  // Each kind names its own reason.
  const one = async (id: number) =>
    (await runDrover(['results', 'J', '--json', '--tasklist', String(id)], { cwd })).stderr;
  assert.match(await one(3), /3\.1\.result\.json is not JSON/);
  assert.match(await one(4), /4\.1\.result\.json is \d+ bytes, more than 1 MiB/);
  assert.match(await one(5), /is nested deeper than 32/);
  assert.match(await one(6), /6\.1\.result\.json is a directory, not a regular file/);
  assert.equal(await one(7), '', 'a task that left no result is no problem');
});

test('a task whose command changed has no result of its old command (invariant 1)', async (t) => {
  const cwd = tempWorkspace(t);
  await ran(cwd, 'echo "{\\"loss\\": $1}" > "$DROVER_RESULT_FILE"\n', ['1', '2']);
  const jobfile = path.join(cwd, '.drover', 'jobs', 'J', 'jobs.json');
  fs.writeFileSync(jobfile, fs.readFileSync(jobfile, 'utf8').replace('sh task.sh 2', 'sh task.sh 22'));
  const rows = await droverJson<ResultJson[]>(['results', 'J', '--json'], { cwd });
  assert.deepEqual(
    rows.map((r) => [r.task, r.state, r.params, r.duration_s === null, r.result]),
    [
      [1, 'succeeded', { pos1: '1' }, false, { loss: 1 }],
      [2, 'pending', {}, true, null],
    ],
  );
});

test('a result field named like a column is result.NAME; --sort/--best say which one an ambiguous name means', async (t) => {
  const cwd = tempWorkspace(t);
  fs.writeFileSync(
    path.join(cwd, 'task.sh'),
    'n=$(echo "$1" | cut -d= -f2)\necho "{\\"task\\": \\"mine\\", \\"--lr\\": $((10 - n)), \\"state\\": 1}" > "$DROVER_RESULT_FILE"\n',
  );
  await ok(cwd, [
    'prelaunch',
    '+command',
    'sh task.sh',
    '+jobname',
    'J',
    '+arg-mode',
    'hydra',
    '+arg',
    '--lr',
    '1',
    '2',
    '+q',
  ]);
  await ok(cwd, ['launch', '--jobname', 'J', '-q']);
  const head = parseCsv(await ok(cwd, ['results', 'J', '--csv']))[0];
  assert.deepEqual(head, [
    'task',
    'state',
    '--lr',
    'duration_s',
    'result.task',
    'result.--lr',
    'result.state',
  ]);
  const amb = await runDrover(['results', 'J', '--best', '--lr'], { cwd });
  assert.equal(amb.code, 2);
  assert.equal(
    amb.stderr,
    'drover: --best "--lr" is both a param and a result field: say result.--lr or params.--lr\n',
  );
  const byResult = await droverJson<ResultJson>(['results', 'J', '--best', 'result.--lr', '--json'], { cwd });
  assert.equal(byResult.task, 2);
  const byParam = await droverJson<ResultJson>(['results', 'J', '--best', 'params.--lr', '--json'], { cwd });
  assert.equal(byParam.task, 1);
  // `task` is the task id; the task's own field named task is result.task.
  const byId = await droverJson<ResultJson>(['results', 'J', '--best', 'task:max', '--json'], { cwd });
  assert.equal(byId.task, 2);
});

test('bad input is one line, exit 2, nothing written', async (t) => {
  const cwd = tempWorkspace(t);
  await ran(cwd, 'echo \'{"loss": 1}\' > "$DROVER_RESULT_FILE"\n', ['a']);
  const before = snapshot(cwd);
  const cases: [string[], RegExp][] = [
    [
      ['results', 'J', '--sort', 'nope'],
      /--sort "nope" names no field of these results: use one of task, pos1, duration_s, loss/,
    ],
    [['results', 'J', '--best', ''], /--best "" is no field name/],
    [['results', 'J', '--best', 'lo\u0001ss'], /--best "lo\\u0001ss" is no field name/],
    [['results', 'J', '--best', 'loss:median'], /--best "loss:median" names no field/],
    [['results', 'J', '--best', 'NaN'], /--best "NaN" names no field/],
    [['results', 'J', '--best', 'x'.repeat(100_000)], /--best "x{100}" names no field/],
    [['results', 'J', '--json', '--csv'], /--json and --csv both say how to print: give one/],
    [['results', 'J', '--state', 'done'], /--state 'done' is not a state/],
    [['results', 'J', '--tasklist', '9'], /tasklist '9' names task 9/],
    [['results', 'J', '--tasklist', '1-x'], /1-x/],
    [['results', 'no-such-job'], /no job named 'no-such-job'/],
    [['results', '../etc'], /\.\.\/etc/],
    [['results'], /missing required argument 'job'/],
    [['results', 'J', '--nope'], /unknown option '--nope'/],
    [
      ['launch', '--jobname', 'J', '--result', 'stderr'],
      /--result "stderr" is not a result source: use --result file .* or --result stdout/,
    ],
    [['launch', '--jobname', 'J', '--result', ''], /--result "" is not a result source/],
  ];
  for (const [args, says] of cases) {
    const r = await runDrover(args, { cwd });
    assert.equal(r.code, 2, `${args.join(' ').slice(0, 80)}: ${r.stderr}`);
    assert.equal(r.stdout, '', args.join(' ').slice(0, 80));
    assert.equal(lines(r.stderr).length, 1, r.stderr);
    assert.match(r.stderr, says);
  }
  assert.deepEqual(snapshot(cwd), before);
});

test('results --help describes DROVER_RESULT_FILE, --result stdout, --sort and --best', async (t) => {
  const cwd = tempWorkspace(t);
  const help = await ok(cwd, ['results', '--help']);
  for (const word of [
    'DROVER_RESULT_FILE',
    '--result stdout',
    '--sort',
    '--best',
    '--csv',
    '--json',
    '--state',
  ])
    assert.ok(help.includes(word), word);
  assert.match(await ok(cwd, ['launch', '--help']), /--result <source>/);
});

test('fields that collide once flattened are named; 1e400 is null in the table and --json alike', async (t) => {
  const cwd = tempWorkspace(t);
  const body = `case $1 in
  a) echo '{"": {"loss": 9}, "loss": 10}' > "$DROVER_RESULT_FILE";;
  b) echo '{"loss": 1e400, "acc": 0.5}' > "$DROVER_RESULT_FILE";;
esac
`;
  await ran(cwd, body, ['a', 'b']);
  const r = await runDrover(['results', 'J', '--json'], { cwd });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(
    (JSON.parse(r.stdout) as ResultJson[]).map((x) => x.result),
    [
      { '': { loss: 9 }, loss: 10 },
      { loss: null, acc: 0.5 },
    ],
  );
  assert.deepEqual(lines(r.stderr), [
    'drover: warning: 2 results have fields to check (task 1: fields ""."loss" and "loss" are all loss once flattened: the table shows the last, ...)',
  ]);
  const two = await runDrover(['results', 'J', '--tasklist', '2'], { cwd });
  assert.match(two.stderr, /task 2: field loss is a number too large for a double: shown as null/);
  const table = lines(two.stdout);
  const at = table[0]!.indexOf('loss');
  assert.equal(table[1]!.slice(at).split(/\s+/)[0], '-', two.stdout);
  assert.doesNotMatch(two.stdout, /Infinity/);
});
