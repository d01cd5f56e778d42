import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { elementPython } from '../../src/backends/slurm/element-python.js';
import { elementScript, elementTable } from '../../src/backends/slurm/element-script.js';
import { findPython, perlAvailable } from '../../src/runner/forkserver.js';
import type { GroupTask, LaunchFile, RunSettings } from '../../src/runner/group.js';
import { Runner } from '../../src/runner/runner.js';
import { singleEnv, writeSingleRunner } from '../../src/runner/single.js';
import { droverBin } from '../helpers/drover.js';

/**
 * Every runner drover has, run over and over on the same exit-code scenarios while both cores are kept busy: a
 * record must never give one task another's end (in one CI run the bash element runner recorded a missing
 * program, exit 127, as `killed` with no exit code, because bash answers 127 for a pid it does not know). The
 * tasks end close together and slots are reused at once, so the runners' reaping, pid bookkeeping and signal
 * paths race each other as they do on a loaded node. Bounded in time: each runner gets ROUNDS rounds or its
 * share of the budget, whichever ends first.
 */

/** Command, then the end it must be recorded with. */
const SCENARIOS: [string, { state: string; exit_code: number | null; signal: string | null }][] = [
  ['true', { state: 'succeeded', exit_code: 0, signal: null }],
  ["sh -c 'exit 3'", { state: 'failed', exit_code: 3, signal: null }],
  ["sh -c 'kill -9 $$'", { state: 'killed', exit_code: null, signal: 'SIGKILL' }],
  ["sh -c 'kill -TERM $$'", { state: 'killed', exit_code: null, signal: 'SIGTERM' }],
  ['drover-no-such-program', { state: 'failed', exit_code: 127, signal: null }],
  ["sh -c 'exit 127'", { state: 'failed', exit_code: 127, signal: null }],
  ['./not-executable', { state: 'failed', exit_code: 126, signal: null }],
  ["sh -c 'sleep 0.02 & exit 5'", { state: 'failed', exit_code: 5, signal: null }],
  ["sh -c 'sleep 0.01; exit 0'", { state: 'succeeded', exit_code: 0, signal: null }],
];

const ROUNDS = 8;
const BUDGET_MS = 2500;

const busy: ChildProcess[] = [];
before(() => {
  for (let i = 0; i < 2; i++) {
    const p = spawn('sh', ['-c', 'while :; do :; done'], { stdio: 'ignore', detached: true });
    busy.push(p);
  }
});
after(() => {
  for (const p of busy) if (p.pid) process.kill(-p.pid, 'SIGKILL');
});

function settings(dir: string, maxTasks: number): RunSettings {
  const s: RunSettings = {
    v: 1,
    job: 'S',
    launch: 1,
    retries: 0,
    retryDelay: 0,
    killGrace: 1,
    logDir: path.join(dir, 'logs'),
    recordsDir: path.join(dir, 'records'),
    cancelDir: path.join(dir, 'cancel'),
    cwd: dir,
    maxTasks,
    termState: 'killed',
  };
  fs.mkdirSync(s.logDir, { recursive: true });
  fs.mkdirSync(s.recordsDir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'not-executable'), 'echo hi\n', { mode: 0o644 });
  return s;
}

function ends(s: RunSettings): Map<number, Record<string, unknown>> {
  const out = new Map<number, Record<string, unknown>>();
  for (const f of fs.readdirSync(s.recordsDir)) {
    for (const line of fs.readFileSync(path.join(s.recordsDir, f), 'utf8').split('\n')) {
      if (!line) continue;
      const r = JSON.parse(line) as Record<string, unknown>;
      if (r.type === 'end') {
        assert.ok(!out.has(r.task as number), `task ${r.task} ended twice`);
        out.set(r.task as number, r);
      }
    }
  }
  return out;
}

function check(s: RunSettings, what: string, round: number): void {
  const got = ends(s);
  SCENARIOS.forEach(([command, want], i) => {
    const r = got.get(i + 1);
    assert.ok(r, `${what}, round ${round}: task ${i + 1} (${command}) has no end record`);
    assert.deepEqual(
      { state: r.state, exit_code: r.exit_code, signal: r.signal },
      want,
      `${what}, round ${round}: task ${i + 1} (${command})`,
    );
  });
}

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => child.on('close', (code) => resolve(code)));
}

const tasks = (): GroupTask[] => SCENARIOS.map(([command], i) => ({ id: i + 1, command, attempt: 1 }));

/** One round of a runner in a fresh folder: runs the scenarios and checks every end record. */
type Round = (dir: string, round: number) => Promise<void>;

async function stress(t: { after(fn: () => void): void }, round: Round): Promise<void> {
  const t0 = Date.now();
  for (let i = 1; i <= ROUNDS && (i <= 2 || Date.now() - t0 < BUDGET_MS); i++) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-stress-'));
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    await round(dir, i);
  }
}

for (const spawner of ['python', 'perl', 'node'] as const) {
  const missing = (spawner === 'python' && !findPython()) || (spawner === 'perl' && !perlAvailable());
  test(`drover's runner (${spawner} executor): every task's own end, round after round under load`, {
    skip: missing ? `no ${spawner} here` : false,
  }, async (t) => {
    await stress(t, async (dir, round) => {
      const s = settings(dir, 2);
      const runner = new Runner(
        { ...s, group: '1', tasks: tasks() },
        {},
        {
          ...process.env,
          DROVER_SPAWNER: spawner,
        },
      );
      await runner.run();
      check(s, `runner/${spawner}`, round);
    });
  });
}

for (const element of ['bash', 'python'] as const) {
  test(`packed element runner (${element}): every task's own end, round after round under load`, {
    skip: element === 'python' && !findPython() ? 'no python here' : false,
  }, async (t) => {
    await stress(t, async (dir, round) => {
      const s = settings(dir, 2);
      const table = path.join(dir, 'tasks.txt');
      const per = SCENARIOS.length;
      fs.writeFileSync(table, elementTable(tasks(), per));
      const script = path.join(dir, 'element.sh');
      const python = path.join(dir, 'element.py');
      fs.writeFileSync(
        python,
        elementPython({ settings: s, tableFile: table, tasksPerNode: per, bashScript: script }),
      );
      fs.writeFileSync(
        script,
        elementScript({
          settings: s,
          tableFile: table,
          tasksPerNode: per,
          node: process.execPath,
          bin: droverBin,
          python,
        }),
      );
      const launchFile = path.join(dir, 'launch.json');
      const file: LaunchFile = { ...s, groups: { '1': tasks() } };
      fs.writeFileSync(launchFile, JSON.stringify(file));
      const child = spawn('/bin/bash', [script, 'runner', launchFile, '--group', '1'], {
        stdio: 'ignore',
        env: { ...process.env, DROVER_ELEMENT_RUNNER: element },
      });
      assert.equal(await exited(child), 1);
      check(s, `element/${element}`, round);
    });
  });
}

test('single-task element runner (perl): every task’s own end, round after round under load', {
  skip: perlAvailable() ? false : 'no perl here',
}, async (t) => {
  await stress(t, async (dir, round) => {
    const s = settings(dir, 1);
    const { table, script } = writeSingleRunner(dir, new Map(tasks().map((x) => [x.id, x])));
    // Two elements at a time, as a node runs two single-task elements at once.
    const keys = tasks().map((x) => x.id);
    const run = async () => {
      for (let k = keys.shift(); k !== undefined; k = keys.shift()) {
        const child = spawn('perl', [script, table, String(k)], {
          stdio: 'ignore',
          cwd: dir,
          env: { ...process.env, ...singleEnv(s) },
        });
        await exited(child);
      }
    };
    await Promise.all([run(), run()]);
    check(s, 'single/perl', round);
  });
});
