import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { writeElementRunner } from '../../../src/backends/slurm/element-script.js';
import type { GroupTask, LaunchFile, RunSettings } from '../../../src/runner/group.js';
import { singleEnv, writeSingleRunner } from '../../../src/runner/single.js';
import { droverBin } from '../../helpers/drover.js';
import { fillDisk, needsRoot, taskGate, tmpfsFolder } from '../../helpers/mounts.js';

/**
 * The runners of cluster elements (Python and bash for packed elements, Perl for one task per element) on a
 * disk that is full (a real tmpfs): they write whole record lines only, start no task while they cannot record
 * it, and write what they kept once space returns.
 */

const RUNNERS = ['python', 'bash', 'perl'] as const;
type ElementRunner = (typeof RUNNERS)[number];

interface Element {
  dir: string;
  recordsDir: string;
  /** Where tasks leave a mark (not on the full disk): one file per task that ran. */
  marks: string;
  /**
   * Let tasks 7 and on run: until then they wait, so a test that fills the disk once some tasks ran finds the
   * runner still running tasks, however fast the machine.
   */
  openGate(): void;
  start(): { child: ChildProcess; exit: Promise<number | null>; stderr: () => string };
}

function setup(
  t: { after(fn: () => void | Promise<void>): void },
  runner: ElementRunner,
  n: number,
): Element {
  const dir = tmpfsFolder(t, '2m');
  const marks = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-marks-'));
  t.after(() => fs.rmSync(marks, { recursive: true, force: true }));
  const gate = taskGate(t);
  const settings: RunSettings = {
    v: 1,
    job: 'J',
    launch: 3,
    retries: 0,
    retryDelay: 1,
    killGrace: 1,
    logDir: path.join(dir, 'logs'),
    recordsDir: path.join(dir, 'records'),
    cancelDir: path.join(dir, 'cancel'),
    cwd: dir,
    maxTasks: 2,
    termState: 'killed',
  };
  fs.mkdirSync(settings.logDir);
  fs.mkdirSync(settings.recordsDir);
  const command = `${gate.hold('"$DROVER_TASK_ID"', 6)}; touch ${marks}/$DROVER_TASK_ID`;
  const tasks: GroupTask[] = Array.from({ length: n }, (_, i) => ({ id: i + 1, command, attempt: 1 }));
  let argv: string[];
  let env: NodeJS.ProcessEnv = process.env;
  if (runner === 'perl') {
    const { table, script } = writeSingleRunner(dir, new Map([[1, tasks[0]!]]));
    argv = ['perl', script, table, '1'];
    env = { ...process.env, ...singleEnv(settings) };
  } else {
    const launchFile = path.join(dir, 'launch.json');
    const file: LaunchFile = { ...settings, groups: { '1': tasks } };
    fs.writeFileSync(launchFile, JSON.stringify(file));
    const script = writeElementRunner(dir, {
      settings,
      tasks,
      tasksPerNode: n,
      node: process.execPath,
      bin: droverBin,
    });
    argv = ['/bin/bash', script, 'runner', launchFile, '--group', '1'];
    env = { ...process.env, DROVER_ELEMENT_RUNNER: runner };
  }
  return {
    dir,
    recordsDir: settings.recordsDir,
    marks,
    openGate: gate.open,
    start: () => {
      const child = spawn(argv[0]!, argv.slice(1), { env, stdio: ['ignore', 'ignore', 'pipe'] });
      t.after(() => {
        child.kill('SIGKILL');
      });
      let stderr = '';
      child.stderr!.on('data', (d) => {
        stderr += String(d);
      });
      const exit = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
      return { child, exit, stderr: () => stderr };
    },
  };
}

/** The records of the element, each line checked to be whole. */
function records(e: Element): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const f of fs.readdirSync(e.recordsDir)) {
    const text = fs.readFileSync(path.join(e.recordsDir, f), 'utf8');
    assert.ok(text === '' || text.endsWith('\n'), `${f} ends with a whole line`);
    for (const l of text.split('\n').slice(0, -1)) out.push(JSON.parse(l) as Record<string, unknown>);
  }
  return out;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, probe: () => boolean, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await sleep(25);
  }
}

for (const runner of RUNNERS) {
  test(`${runner} element runner on a full disk: no task starts until its records can be written`, {
    skip: needsRoot,
    timeout: 60_000,
  }, async (t) => {
    const n = runner === 'perl' ? 1 : 6;
    const e = setup(t, runner, n);
    const ballast = fillDisk(e.dir);
    const run = e.start();
    await sleep(2000);
    assert.deepEqual(fs.readdirSync(e.marks), [], 'no task ran while its start could not be recorded');
    assert.equal(run.child.exitCode, null, 'the runner waits');
    assert.deepEqual(records(e), []);
    fs.rmSync(ballast);
    assert.equal(await run.exit, 0, run.stderr());
    assert.equal(fs.readdirSync(e.marks).length, n);
    const rs = records(e);
    assert.deepEqual(
      [rs[0]!.type, rs.at(-1)!.type, rs.filter((r) => r.type === 'end' && r.state === 'succeeded').length],
      ['runner', 'runner-end', n],
    );
    assert.match(run.stderr(), /drover: .*keeping \d+ record\(s\) in memory/);
  });
}

for (const runner of ['python', 'bash'] as const) {
  test(`${runner} element runner: a disk that fills up mid-run leaves whole lines, and the run completes`, {
    skip: needsRoot,
    timeout: 120_000,
  }, async (t) => {
    const e = setup(t, runner, 400);
    const run = e.start();
    await until('tasks started', () => fs.readdirSync(e.marks).length > 5);
    const ballast = fillDisk(e.dir);
    e.openGate();
    // Blocked: no more tasks start.
    let seen = fs.readdirSync(e.marks).length;
    let since = Date.now();
    await until('no task started for 1.5 s', () => {
      const now = fs.readdirSync(e.marks).length;
      if (now !== seen) {
        seen = now;
        since = Date.now();
      }
      return Date.now() - since > 1500;
    });
    assert.ok(seen < 400, 'it stopped starting tasks');
    assert.equal(run.child.exitCode, null);
    records(e); // whole lines while blocked
    fs.rmSync(ballast);
    assert.equal(await run.exit, 0, run.stderr());
    const rs = records(e);
    assert.equal(rs.filter((r) => r.type === 'end' && r.state === 'succeeded').length, 400);
    assert.equal(new Set(rs.filter((r) => r.type === 'start').map((r) => r.task)).size, 400);
    assert.equal(rs.at(-1)!.type, 'runner-end');
  });
}
