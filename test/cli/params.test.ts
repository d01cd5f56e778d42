import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { list } from '../helpers/contract.js';
import { lines, runDrover, startDrover } from '../helpers/drover.js';
import { tempWorkspace } from '../helpers/workspace.js';

/**
 * Issue 12, item 1: prelaunch records each task's sweep values beside the jobfile (params.json), and list --json,
 * the list table and the API carry them as `params`, tied to the command the task has now.
 */

async function prelaunch(cwd: string, ...words: string[]): Promise<void> {
  const r = await runDrover(['prelaunch', ...words, '+q'], { cwd });
  assert.equal(r.code, 0, r.stderr);
}

const params = async (cwd: string, job: string) => (await list(job, { cwd })).map((t) => t.params);
const jobDir = (cwd: string, job: string) => path.join(cwd, '.drover', 'jobs', job);

test('+arg, +pos-arg, +flag and +tag: each task gets exactly its sweep values, keyed as in the sweep', async (t) => {
  const cwd = tempWorkspace(t);
  await prelaunch(
    cwd,
    '+command',
    'python t.py',
    '+jobname',
    'J',
    '+pos-arg',
    'a',
    'b',
    '+arg',
    '--lr',
    '0.1',
    '0.01',
  );
  await prelaunch(cwd, '+command', 'x', '+jobname', 'F', '+arg', '--seed', '1', '+flag', '--fast', '+tag');
  assert.deepEqual(await params(cwd, 'J'), [
    { pos1: 'a', '--lr': '0.1' },
    { pos1: 'b', '--lr': '0.1' },
    { pos1: 'a', '--lr': '0.01' },
    { pos1: 'b', '--lr': '0.01' },
  ]);
  // The tag is no param; the flag is on, then off.
  const f = await list('F', { cwd });
  assert.deepEqual(
    f.map((x) => [x.command, x.params]),
    [
      ['x --seed 1 --fast --tag F_1__seed_1__+fast', { '--seed': '1', '--fast': 'true' }],
      ['x --seed 1 --tag F_2__seed_1__-fast', { '--seed': '1', '--fast': 'false' }],
    ],
  );
  // Key order is the command's: JSON keeps it.
  assert.deepEqual(Object.keys(f[0]!.params), ['--seed', '--fast']);
  // jobs.json stays onager's format byte for byte.
  assert.equal(
    fs.readFileSync(path.join(jobDir(cwd, 'F'), 'jobs.json'), 'utf8'),
    '{"1": ["x --seed 1 --fast --tag F_1__seed_1__+fast", "F_1__seed_1__+fast"], "2": ["x --seed 1 --tag F_2__seed_1__-fast", "F_2__seed_1__-fast"]}',
  );
});

test('hydra mode keys by the bare name; a second +pos-arg is pos2; names that collide keep the +arg', async (t) => {
  const cwd = tempWorkspace(t);
  await prelaunch(cwd, '+command', 'x', '+jobname', 'H', '+arg-mode', 'hydra', '+arg', 'lr', '1', '2');
  assert.deepEqual(await params(cwd, 'H'), [{ lr: '1' }, { lr: '2' }]);
  await prelaunch(cwd, '+command', 'x', '+jobname', 'P', '+pos-arg', 'a', '+pos-arg', 'b', 'c');
  assert.deepEqual(await params(cwd, 'P'), [
    { pos1: 'a', pos2: 'b' },
    { pos1: 'a', pos2: 'c' },
  ]);
  // A hostile sweep: an +arg named like a positional's key, a flag that is also an +arg, prototype names.
  await prelaunch(
    cwd,
    ...['+command', 'x', '+jobname', 'C', '+arg-mode', 'hydra', '+pos-arg', 'p', '+arg', 'pos1', 'z'],
    ...['+arg', '__proto__', '1', '+arg', 'toString', '2', '+flag', 'pos1'],
  );
  const own = { pos1: 'z', ['__proto__']: '1', toString: '2' }; // computed: an own key, not the prototype
  assert.deepEqual(await params(cwd, 'C'), [own, own]);
  const c = (await params(cwd, 'C'))[0]!;
  assert.ok(Object.hasOwn(c, '__proto__'), 'a key named __proto__ is data');
});

test('+append adds the new tasks’ params and keeps the earlier ones; concurrent appends lose none', async (t) => {
  const cwd = tempWorkspace(t);
  await prelaunch(cwd, '+command', 'x', '+jobname', 'A', '+arg', '--lr', '1', '2');
  await prelaunch(cwd, '+command', 'y', '+jobname', 'A', '+arg', '--seed', '7', '+append');
  assert.deepEqual(await params(cwd, 'A'), [{ '--lr': '1' }, { '--lr': '2' }, { '--seed': '7' }]);
  const runs = Array.from({ length: 6 }, (_, i) =>
    startDrover(
      ['prelaunch', '+command', `run${i}`, '+jobname', 'A', '+arg', '--i', `${i}a`, `${i}b`, '+append', '+q'],
      {
        cwd,
      },
    ),
  );
  for (const r of await Promise.all(runs.map((x) => x.result))) assert.equal(r.code, 0, r.stderr);
  const tasks = await list('A', { cwd });
  assert.equal(tasks.length, 3 + 12);
  for (const task of tasks.slice(3)) {
    const m = /^run(\d) --i (\d[ab])$/.exec(task.command);
    assert.ok(m, task.command);
    assert.deepEqual(task.params, { '--i': m[2] });
  }
  // params.json is whole JSON with every task.
  const file = JSON.parse(fs.readFileSync(path.join(jobDir(cwd, 'A'), 'params.json'), 'utf8')) as object;
  assert.equal(Object.keys(file).length, 15);
});

test('a jobfile onager (or a person) wrote has no params; an edited task loses its params, the others keep theirs', async (t) => {
  const cwd = tempWorkspace(t);
  fs.mkdirSync(jobDir(cwd, 'O'), { recursive: true });
  fs.writeFileSync(path.join(jobDir(cwd, 'O'), 'jobs.json'), '{"1": ["echo 1", ""], "2": ["echo 2", ""]}');
  assert.deepEqual(await params(cwd, 'O'), [{}, {}]);

  await prelaunch(cwd, '+command', 'echo', '+jobname', 'E', '+arg', '--n', '1', '2', '3');
  const jobfile = path.join(jobDir(cwd, 'E'), 'jobs.json');
  fs.writeFileSync(jobfile, fs.readFileSync(jobfile, 'utf8').replace('echo --n 2', 'echo --n 22'));
  assert.deepEqual(await params(cwd, 'E'), [{ '--n': '1' }, {}, { '--n': '3' }]);
  // Putting the command back gives the values back: they belong to that command.
  fs.writeFileSync(jobfile, fs.readFileSync(jobfile, 'utf8').replace('echo --n 22', 'echo --n 2'));
  assert.deepEqual(await params(cwd, 'E'), [{ '--n': '1' }, { '--n': '2' }, { '--n': '3' }]);
});

test('a damaged or hostile params.json is ignored with one warning, never a crash', async (t) => {
  const cwd = tempWorkspace(t);
  await prelaunch(cwd, '+command', 'echo', '+jobname', 'D', '+arg', '--n', '1', '2');
  const file = path.join(jobDir(cwd, 'D'), 'params.json');
  const good = fs.readFileSync(file, 'utf8');
  const many = Object.fromEntries(Array.from({ length: 1001 }, (_, i) => [`k${i}`, 'v']));
  const hostile: [string, string][] = [
    ['not JSON', '{"1": {"command": '],
    ['an array', '[1, 2]'],
    ['a task that is no record', '{"1": "echo --n 1"}'],
    ['a non-string value', '{"1": {"command": "echo --n 1", "params": {"--n": 1}}}'],
    ['a bad id', '{"x": {"command": "echo --n 1", "params": {}}}'],
    ['too many keys', JSON.stringify({ 1: { command: 'echo --n 1', params: many } })],
    ['huge', `${good}${' '.repeat(2 * 1024 * 1024)}`],
  ];
  for (const [what, text] of hostile) {
    fs.writeFileSync(file, text);
    const r = await runDrover(['list', 'D', '--json'], { cwd });
    assert.equal(r.code, 0, `${what}: ${r.stderr}`);
    assert.deepEqual(
      (JSON.parse(r.stdout) as { params: object }[]).map((x) => x.params),
      [{}, {}],
      what,
    );
    const warnings = lines(r.stderr).filter((l) => l.includes('params.json'));
    assert.equal(warnings.length, 1, `${what}: ${r.stderr}`);
    assert.match(warnings[0]!, /^drover: warning: .*params\.json .*; the job's tasks show no params/, what);
    // Once read, the same file is not warned about again.
    const again = await runDrover(['list', 'D', '--json'], { cwd });
    assert.equal(again.stderr, '', what);
  }
  // A good file again: the values come back.
  fs.writeFileSync(file, good);
  assert.deepEqual(await params(cwd, 'D'), [{ '--n': '1' }, { '--n': '2' }]);
  // +append over a damaged file warns, drops the old values and records the new ones.
  fs.writeFileSync(file, 'garbage');
  const r = await runDrover(
    ['prelaunch', '+command', 'z', '+jobname', 'D', '+arg', '--m', '5', '+append', '+q'],
    {
      cwd,
    },
  );
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /warning: .*params\.json is not valid JSON; the earlier tasks' params are dropped/);
  assert.deepEqual(await params(cwd, 'D'), [{}, {}, { '--m': '5' }]);
});

test('the list table shows one column per params key after tag, - where a task has none', async (t) => {
  const cwd = tempWorkspace(t);
  await prelaunch(cwd, '+command', 'x', '+jobname', 'T', '+arg', '--lr', '0.1', '0.01', '+flag', '--fast');
  await prelaunch(cwd, '+command', 'y', '+jobname', 'T', '+pos-arg', 'é漢', '+append');
  const r = await runDrover(['list', 'T'], { cwd });
  assert.equal(r.code, 0, r.stderr);
  const rows = lines(r.stdout).map((l) => l.trim().split(/\s{2,}/));
  assert.deepEqual(rows[0], [
    'job',
    'task',
    'state',
    'exit',
    'attempts',
    'tag',
    '--lr',
    '--fast',
    'pos1',
    'command',
  ]);
  // (The tag is empty: split on wide gaps, the row has no cell for it.)
  assert.deepEqual(rows[1], ['T', '1', 'pending', '-', '0', '0.1', 'true', '-', 'x --lr 0.1 --fast']);
  assert.deepEqual(
    rows.slice(1).map((c) => c.slice(5, 8)),
    [
      ['0.1', 'true', '-'],
      ['0.01', 'true', '-'],
      ['0.1', 'false', '-'],
      ['0.01', 'false', '-'],
      ['-', '-', 'é漢'],
    ],
  );
  // Aligned: every row's command starts in the header's command column (é漢 is 3 columns wide).
  const head = lines(r.stdout)[0]!;
  const at = head.indexOf('command');
  assert.equal(lines(r.stdout)[5]!.replaceAll('é漢', 'xxx').indexOf('y xxx'), at);
});
