import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { elementPython } from '../../../src/backends/slurm/element-python.js';
import { elementScript, elementTable } from '../../../src/backends/slurm/element-script.js';
import type { GroupTask, LaunchFile, RunSettings } from '../../../src/runner/group.js';
import { droverBin } from '../../helpers/drover.js';

/**
 * The element runner run for real by bash, as a Slurm array element would run it (no Slurm needed): the
 * records it writes must be the ones drover's runner writes.
 */

const COMMANDS: Record<number, string> = {
  1: 'echo hello',
  2: "sh -c 'exit 3'",
  3: 'printf \'%s|%s\\n\' "$DROVER_TASK_ID" "$DROVER_ATTEMPT"; echo "it\'s $DROVER_JOBNAME" >&2',
  4: "sh -c 'kill -9 $$'",
  5: 'echo \'é \\ "q"\'\necho second line',
  6: 'sleep 30',
  7: 'echo seven',
};

interface Env {
  dir: string;
  settings: RunSettings;
  launchFile: string;
  script: string;
}

function setup(t: { after(fn: () => void): void }): Env {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'drover-element-')));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const settings: RunSettings = {
    v: 1,
    job: 'J',
    launch: 3,
    retries: 0,
    retryDelay: 1,
    killGrace: 1,
    logDir: path.join(dir, 'logs with space'),
    recordsDir: path.join(dir, 'records'),
    cancelDir: path.join(dir, 'cancel'),
    cwd: dir,
    maxTasks: 1,
    termState: 'killed',
  };
  fs.mkdirSync(settings.logDir);
  fs.mkdirSync(settings.recordsDir);
  const groups = new Map<number, GroupTask>(
    Object.entries(COMMANDS).map(([id, command]) => [Number(id), { id: Number(id), command, attempt: 2 }]),
  );
  const launchFile = path.join(dir, 'launch.json');
  const file: LaunchFile = {
    ...settings,
    groups: Object.fromEntries([...groups].map(([k, g]) => [String(k), [g]])),
  };
  fs.writeFileSync(launchFile, JSON.stringify(file));
  const tableFile = path.join(dir, 'slurm-tasks.txt');
  fs.writeFileSync(tableFile, elementTable([...groups.values()], 1));
  const script = path.join(dir, 'slurm-element.sh');
  fs.writeFileSync(
    script,
    elementScript({ settings, tableFile, tasksPerNode: 1, node: process.execPath, bin: droverBin }),
  );
  return { dir, settings, launchFile, script };
}

/** Run the element of group `key`; `onStart` may signal it once its task started. */
function runElement(e: Env, key: number, onStart?: (pid: number) => void): Promise<number | null> {
  const child = spawn('/bin/bash', [e.script, 'runner', e.launchFile, '--group', String(key)], {
    stdio: 'ignore',
  });
  if (onStart) {
    const timer = setInterval(() => {
      if (records(e, key).some((r) => r.type === 'start')) {
        clearInterval(timer);
        onStart(child.pid!);
      }
    }, 50);
    child.on('exit', () => clearInterval(timer));
  }
  return new Promise((resolve) => child.on('exit', (code) => resolve(code)));
}

function records(e: Env, key: number): Record<string, unknown>[] {
  return fs
    .readdirSync(e.settings.recordsDir)
    .filter((f) => f.startsWith(`g${key}.`))
    .flatMap((f) => fs.readFileSync(path.join(e.settings.recordsDir, f), 'utf8').split('\n'))
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

const ends = (e: Env, key: number) => records(e, key).find((r) => r.type === 'end');

test('records runner, start, end and runner-end lines like drover’s runner, with logs per task', async (t) => {
  const e = setup(t);
  assert.equal(await runElement(e, 1), 0);
  const rs = records(e, 1);
  assert.deepEqual(
    rs.map((r) => r.type),
    ['runner', 'start', 'end', 'runner-end'],
  );
  const [runner, start, end] = rs;
  assert.equal(runner!.runner, `g1.${os.hostname().split('.')[0]}.${runner!.pid}`);
  assert.deepEqual([runner!.launch, runner!.job, runner!.slots, runner!.v], [3, 'J', 1, 1]);
  assert.deepEqual([start!.task, start!.attempt, start!.slot], [1, 2, 0]);
  assert.equal(start!.out, path.join(e.settings.logDir, '1.2.out'));
  assert.equal(start!.err, path.join(e.settings.logDir, '1.2.err'));
  assert.deepEqual([end!.state, end!.exit_code, end!.signal], ['succeeded', 0, null]);
  assert.equal(fs.readFileSync(path.join(e.settings.logDir, '1.2.out'), 'utf8'), 'hello\n');
});

test('exit codes, signals, task variables and commands with quotes, newlines and non-ASCII', async (t) => {
  const e = setup(t);
  assert.equal(await runElement(e, 2), 1);
  assert.deepEqual([ends(e, 2)!.state, ends(e, 2)!.exit_code], ['failed', 3]);
  await runElement(e, 3);
  assert.equal(fs.readFileSync(path.join(e.settings.logDir, '3.2.out'), 'utf8'), '3|2\n');
  assert.equal(fs.readFileSync(path.join(e.settings.logDir, '3.2.err'), 'utf8'), "it's J\n");
  await runElement(e, 4);
  assert.deepEqual(
    [ends(e, 4)!.state, ends(e, 4)!.exit_code, ends(e, 4)!.signal],
    ['killed', null, 'SIGKILL'],
  );
  await runElement(e, 5);
  assert.equal(fs.readFileSync(path.join(e.settings.logDir, '5.2.out'), 'utf8'), 'é \\ "q"\nsecond line\n');
});

test('SIGTERM from the scheduler stops the task’s process group and records killed (scheduler stop)', async (t) => {
  const e = setup(t);
  const t0 = Date.now();
  await runElement(e, 6, (pid) => process.kill(pid, 'SIGTERM'));
  assert.ok(Date.now() - t0 < 10_000, 'sleep 30 was stopped');
  const end = ends(e, 6)!;
  assert.deepEqual([end.state, end.reason], ['killed', 'the runner was sent SIGTERM (scheduler stop)']);
  // Its signal, when bash could tell (a child that ends while a trap runs loses its status in bash).
  assert.ok(end.signal === 'SIGTERM' || end.signal === null);
  const pid = records(e, 6).find((r) => r.type === 'start')!.pid as number;
  assert.throws(() => process.kill(pid, 0), 'the task is gone');
});

test('a cancel request already in the launch: the task is skipped, recorded cancelled', async (t) => {
  const e = setup(t);
  fs.mkdirSync(e.settings.cancelDir);
  fs.writeFileSync(path.join(e.settings.cancelDir, '1-1.json'), JSON.stringify({ tasks: [7], at: 1 }));
  await runElement(e, 7);
  assert.deepEqual(
    records(e, 7).map((r) => [r.type, r.state]),
    [
      ['runner', undefined],
      ['skip', 'cancelled'],
      ['runner-end', undefined],
    ],
  );
});

/** A packed element: group 1 of `commands`, `slots` slots, in its own temp folder. */
function setupPacked(
  t: { after(fn: () => void): void },
  commands: string[],
  more: Partial<RunSettings> = {},
): Env {
  const e = setup(t);
  const settings: RunSettings = { ...e.settings, ...more };
  const tasks: GroupTask[] = commands.map((command, i) => ({ id: i + 1, command, attempt: 1 }));
  const tableFile = path.join(e.dir, 'packed-tasks.txt');
  fs.writeFileSync(tableFile, elementTable(tasks, commands.length));
  const script = path.join(e.dir, 'packed-element.sh');
  const python = path.join(e.dir, 'packed-element.py');
  const tasksPerNode = commands.length;
  fs.writeFileSync(python, elementPython({ settings, tableFile, tasksPerNode, bashScript: script }));
  fs.writeFileSync(
    script,
    elementScript({ settings, tableFile, tasksPerNode, node: process.execPath, bin: droverBin, python }),
  );
  return { ...e, settings, script };
}

/** The packed element runners: Python where the node has it (the default), bash otherwise. */
const RUNNERS = ['python', 'bash'] as const;
type ElementRunner = (typeof RUNNERS)[number];

function runPacked(
  e: Env,
  runner: ElementRunner,
  env: NodeJS.ProcessEnv = {},
): { exit: Promise<number | null>; pid: number } {
  const child = spawn('/bin/bash', [e.script, 'runner', e.launchFile, '--group', '1'], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, DROVER_ELEMENT_RUNNER: runner, ...env },
  });
  let stderr = '';
  child.stderr!.on('data', (d) => {
    stderr += String(d);
  });
  return {
    pid: child.pid!,
    exit: new Promise((resolve) =>
      child.on('close', (code) => {
        if (code !== 0 && stderr) process.stderr.write(stderr);
        resolve(code);
      }),
    ),
  };
}

async function until(what: string, probe: () => boolean, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

for (const runner of RUNNERS) {
  test(`packed (${runner}): exit codes, signals, task variables, quotes, newlines and non-ASCII`, async (t) => {
    const commands = [1, 2, 3, 4, 5].map((id) => COMMANDS[id]!);
    const e = setupPacked(t, [...commands, 'drover-no-such-program'], { maxTasks: 2 });
    assert.equal(await runPacked(e, runner).exit, 1);
    const rs = records(e, 1);
    const end = (task: number) => rs.find((r) => r.type === 'end' && r.task === task)!;
    const log = (task: number, ext: string) =>
      fs.readFileSync(path.join(e.settings.logDir, `${task}.1.${ext}`), 'utf8');
    assert.deepEqual([end(1).state, end(1).exit_code], ['succeeded', 0]);
    assert.equal(log(1, 'out'), 'hello\n');
    assert.deepEqual([end(2).state, end(2).exit_code], ['failed', 3]);
    assert.equal(log(3, 'out'), '3|1\n');
    assert.equal(log(3, 'err'), "it's J\n");
    assert.deepEqual([end(4).state, end(4).exit_code, end(4).signal], ['killed', null, 'SIGKILL']);
    assert.equal(log(5, 'out'), 'é \\ "q"\nsecond line\n');
    assert.deepEqual([end(6).state, end(6).exit_code], ['failed', 127]);
    assert.match(log(6, 'err'), /drover-no-such-program/);
    assert.equal(rs[0]!.type, 'runner');
    assert.equal(rs.filter((r) => r.type === 'end').length, 6);
    assert.equal(rs.filter((r) => r.type === 'start').length, 6);
    assert.equal(rs.at(-1)!.type, 'runner-end');
  });

  test(`packed (${runner}): N slots at once, each with its own GPUs from the element’s, and a log per task`, async (t) => {
    const cmd = 'echo "$DROVER_TASK_ID $DROVER_SLOT $CUDA_VISIBLE_DEVICES"; sleep 0.4';
    const e = setupPacked(t, Array(6).fill(cmd), { maxTasks: 3, gpusPerTask: 1 });
    const t0 = Date.now();
    assert.equal(await runPacked(e, runner, { CUDA_VISIBLE_DEVICES: '4,5,6,7' }).exit, 0);
    assert.ok(Date.now() - t0 < 6 * 400, 'the six tasks ran three at a time');
    const rs = records(e, 1);
    assert.equal(rs[0]!.slots, 3);
    const starts = rs.filter((r) => r.type === 'start');
    assert.deepEqual(
      starts.map((r) => r.task),
      [1, 2, 3, 4, 5, 6],
    );
    for (const r of starts) {
      const [task, slot, gpu] = fs
        .readFileSync(r.out as string, 'utf8')
        .trim()
        .split(' ');
      assert.deepEqual([Number(task), Number(slot), gpu], [r.task, r.slot, String(4 + (r.slot as number))]);
      assert.equal(r.gpus, gpu);
    }
    let running = 0;
    let most = 0;
    for (const r of rs.filter((x) => x.type === 'start' || x.type === 'end')) {
      running += r.type === 'start' ? 1 : -1;
      most = Math.max(most, running);
    }
    assert.equal(most, 3);
    assert.ok(rs.filter((r) => r.type === 'end').every((r) => r.state === 'succeeded'));
  });

  test(`packed (${runner}): a cancel request stops the running task and skips the queued one; the others go on`, async (t) => {
    const e = setupPacked(t, Array(4).fill('sleep 30'), { maxTasks: 2 });
    const run = runPacked(e, runner);
    await until('two tasks started', () => records(e, 1).filter((r) => r.type === 'start').length === 2);
    // The element runs the runner it was asked for (the Python one replaces the bash process that starts it).
    assert.match(fs.readlinkSync(`/proc/${run.pid}/exe`), runner === 'python' ? /python/ : /bash/);
    fs.mkdirSync(e.settings.cancelDir);
    fs.writeFileSync(path.join(e.settings.cancelDir, '1-1.json'), JSON.stringify({ tasks: [1, 3], at: 1 }));
    await until('task 4 started in the freed slot', () =>
      records(e, 1).some((r) => r.type === 'start' && r.task === 4),
    );
    const rs = records(e, 1);
    assert.deepEqual(
      rs
        .filter((r) => r.type === 'end' || r.type === 'skip')
        .map((r) => [r.task, r.type, r.state])
        .sort(),
      [
        [1, 'end', 'cancelled'],
        [3, 'skip', 'cancelled'],
      ],
    );
    // Then the scheduler stops the element: the running tasks end killed (scheduler stop).
    process.kill(run.pid, 'SIGTERM');
    assert.equal(await run.exit, 1);
    const ends = records(e, 1).filter((r) => r.type === 'end' && r.task !== 1);
    assert.deepEqual(ends.map((r) => [r.task, r.state, r.reason]).sort(), [
      [2, 'killed', 'the runner was sent SIGTERM (scheduler stop)'],
      [4, 'killed', 'the runner was sent SIGTERM (scheduler stop)'],
    ]);
    assert.equal(records(e, 1).at(-1)!.type, 'runner-end');
  });

  test(`packed (${runner}): fewer GPUs than a task needs is an error before any task starts`, async (t) => {
    const e = setupPacked(t, ['true', 'true'], { maxTasks: 2, gpusPerTask: 2 });
    assert.equal(await runPacked(e, runner, { CUDA_VISIBLE_DEVICES: '0' }).exit, 2);
    assert.deepEqual(records(e, 1), []);
  });
}
