import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { GroupTask, LogsMode, RunSettings } from '../../src/runner/group.js';
import { shortHostname } from '../../src/util/proc.js';
import { isAlive, launchProcesses, tempWorkspace, waitFor } from '../helpers/workspace.js';
import type { Element, RunnerImpl, TestLaunch } from './runners.js';

/**
 * Runs one scenario's tasks with one runner implementation in a fresh launch folder, as real processes, and reads
 * back what it recorded: the records of every task with what depends on the moment (times, pids, hosts, slots)
 * taken out, so that the records of different runners can be compared as they are.
 */

/** What a scenario sets: its tasks and the settings that differ from the defaults. */
export interface RunSpec {
  commands: string[];
  settings?: Partial<RunSettings>;
  /** Variables of the runner's environment. */
  env?: Record<string, string>;
  /** Tasks with a cancel request in the launch before any runner starts. */
  cancelFirst?: number[];
  /** Runners of one task each started at once (a node running that many elements). */
  parallel?: number;
  /** How output is kept (the settings' `logs`): a file per attempt (the default) or slot segments. */
  logs?: LogsMode;
  /** Done while the runners run (signals, cancel requests), given their processes and a way to wait. */
  during?(run: LiveRun): Promise<void>;
}

/** The runners of a scenario while they run. */
export interface LiveRun {
  launch: TestLaunch;
  /** The running processes (those started so far). */
  processes(): ChildProcess[];
  /** Wait until every one of `tasks` has a start record. */
  started(tasks: number[]): Promise<void>;
  /** Wait until every one of `tasks` has an end record. */
  ended(tasks: number[]): Promise<void>;
  /** Drop a cancel request for `tasks` into the cancel folder, as `drover cancel` does. */
  requestCancel(tasks: number[] | 'all'): void;
}

/** A record as the suite compares it. */
export type Rec = Record<string, unknown>;

/** What one run gave. */
export interface Outcome {
  launch: TestLaunch;
  /** Each task's records (start, end, skip) in the order written, without times, pids, hosts and slots. */
  tasks: Map<number, Rec[]>;
  /** The records as written (for slots, GPUs and order). */
  raw: Rec[];
  /** The `runner-end` reason of each runner (by group key). */
  ends: Map<string, string>;
  /** Each runner process's exit code, by group key. */
  exits: Map<string, number | null>;
}

const LAUNCH = 3;

/** A fresh launch folder for `spec`, laid out as drover lays out a launch of job J (cleaned up after the test). */
export function makeLaunch(t: { after(fn: () => void | Promise<void>): void }, spec: RunSpec): TestLaunch {
  // A space, quotes and non-ASCII in every path: each runner must quote and encode them right.
  const dir = tempWorkspace(t, 'drover conformance "é" ');
  const launchDir = path.join(dir, '.drover', 'jobs', 'J', 'launches', String(LAUNCH));
  const settings: RunSettings = {
    v: 1,
    job: 'J',
    launch: LAUNCH,
    retries: 0,
    retryDelay: 0,
    killGrace: 1,
    logDir: path.join(dir, '.drover', 'logs', 'J', String(LAUNCH)),
    recordsDir: path.join(launchDir, 'records'),
    cancelDir: path.join(launchDir, 'cancel'),
    cwd: dir,
    maxTasks: 2,
    termState: 'killed',
    // A local launch's tasks carry their launch's folder; every runner must pass the launch's variables on.
    env: { DROVER_LAUNCH_DIR: launchDir, X_NOTE: 'a\nb\t"c" é' },
    ...(spec.logs ? { logs: spec.logs } : {}),
    ...spec.settings,
  };
  fs.mkdirSync(settings.logDir, { recursive: true });
  fs.mkdirSync(settings.recordsDir, { recursive: true });
  fs.mkdirSync(settings.cancelDir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'not-executable'), 'echo hi\n', { mode: 0o644 });
  const tasks: GroupTask[] = spec.commands.map((command, i) => ({ id: i + 1, command, attempt: 1 }));
  return { dir, launchDir, settings, tasks, env: spec.env ?? {} };
}

/** Every record in the launch's record files, by file. */
function recordFiles(l: TestLaunch): Map<string, Rec[]> {
  const out = new Map<string, Rec[]>();
  for (const f of fs.readdirSync(l.settings.recordsDir).sort()) {
    const text = fs.readFileSync(path.join(l.settings.recordsDir, f), 'utf8');
    assert.ok(text === '' || text.endsWith('\n'), `${f} ends with a whole line`);
    out.set(
      f,
      text
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Rec),
    );
  }
  return out;
}

function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('close', (code) => resolve(code)));
}

/** Start the elements, at most `parallel` at once; resolves with each one's exit code once all have ended. */
async function runElements(
  l: TestLaunch,
  elements: Element[],
  parallel: number,
  live: ChildProcess[],
): Promise<Map<string, number | null>> {
  const exits = new Map<string, number | null>();
  const queue = [...elements];
  const worker = async () => {
    for (let e = queue.shift(); e !== undefined; e = queue.shift()) {
      const child = spawn(e.argv[0]!, e.argv.slice(1), {
        cwd: l.dir,
        env: e.env,
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr!.on('data', (d) => {
        stderr += String(d);
      });
      live.push(child);
      const code = await exited(child);
      if (code !== 0 && code !== 1) process.stderr.write(`${e.argv.join(' ')} exited ${code}: ${stderr}`);
      exits.set(e.key, code);
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, elements.length) }, worker));
  return exits;
}

/** Run `spec` with `impl` to its end and read what it recorded. */
export async function runWith(
  t: { after(fn: () => void | Promise<void>): void },
  impl: RunnerImpl,
  spec: RunSpec,
): Promise<Outcome> {
  const l = makeLaunch(t, spec);
  const elements = impl.prepare(l);
  const live: ChildProcess[] = [];
  const all = (): Rec[] => [...recordFiles(l).values()].flat();
  const run: LiveRun = {
    launch: l,
    processes: () => live.filter((c) => c.exitCode === null && c.signalCode === null),
    started: async (tasks) => {
      await waitFor(`the start of task(s) ${tasks.join(', ')}`, () =>
        tasks.every((id) => all().some((r) => r.type === 'start' && r.task === id)),
      );
    },
    ended: async (tasks) => {
      await waitFor(`the end of task(s) ${tasks.join(', ')}`, () =>
        tasks.every((id) => all().some((r) => r.type === 'end' && r.task === id)),
      );
    },
    requestCancel: (tasks) => {
      fs.writeFileSync(
        path.join(l.settings.cancelDir, `c${Date.now()}.json`),
        JSON.stringify({ tasks, at: 0 }),
      );
    },
  };
  if (spec.cancelFirst) run.requestCancel(spec.cancelFirst);
  const [exits] = await Promise.all([runElements(l, elements, spec.parallel ?? 2, live), spec.during?.(run)]);
  return { ...readOutcome(l), exits };
}

/** What the runners of a launch recorded, checked for the runner's own lines and taken apart by task. */
function readOutcome(l: TestLaunch): Omit<Outcome, 'exits'> {
  const tasks = new Map<number, Rec[]>();
  const ends = new Map<string, string>();
  const raw: Rec[] = [];
  const host = shortHostname();
  for (const [file, recs] of recordFiles(l)) {
    raw.push(...recs);
    const [runner, ...rest] = recs;
    const last = rest.pop();
    assert.equal(runner?.type, 'runner', `${file} starts with its runner record`);
    assert.equal(last?.type, 'runner-end', `${file} ends with a runner-end record`);
    const key = file.split('.')[0]!.slice(1);
    assert.equal(runner.runner, `g${key}.${host}.${runner.pid}`);
    assert.equal(file, `${runner.runner}.jsonl`);
    assert.deepEqual([runner.v, runner.launch, runner.job, runner.host], [1, LAUNCH, 'J', host]);
    ends.set(key, String(last.reason));
    const slots = runner.slots as number;
    // A skip-many record (drover's runner, cancelling all it has not started) is a skip of each of its tasks,
    // as the other runners write them: the suite compares them so.
    const each = rest.flatMap((r): Rec[] =>
      r.type === 'skip-many'
        ? (r.ranges as [number, number][]).flatMap(([first, last]) =>
            Array.from({ length: last - first + 1 }, (_, i) => ({
              type: 'skip',
              task: first + i,
              at: r.at,
              state: r.state,
            })),
          )
        : [r],
    );
    for (const r of each) {
      assert.ok(
        r.type === 'start' || r.type === 'end' || r.type === 'skip',
        `a task's record: ${JSON.stringify(r)}`,
      );
      assert.equal(typeof r.at, 'number');
      const { at: _at, pid, host: h, slot, seq, out_off, err_off, out_end, err_end, ...kept } = r;
      // An attempt's output in a slot's segments is a byte range (logOf reads it); compared as the runners that
      // keep a file per attempt write it, the records must be the same.
      if (seq !== undefined) {
        kept.out = path.join(l.settings.logDir, `${r.task}.${r.attempt}.out`);
        kept.err = path.join(l.settings.logDir, `${r.task}.${r.attempt}.err`);
      }
      if (r.type === 'start') {
        assert.equal(h, host);
        assert.ok(Number.isInteger(pid) && (pid as number) >= 0, `start pid ${pid}`);
        assert.ok(
          Number.isInteger(slot) && (slot as number) >= 0 && (slot as number) < slots,
          `slot ${slot}`,
        );
      }
      const id = r.task as number;
      tasks.set(id, [...(tasks.get(id) ?? []), kept]);
    }
    // An attempt never ends before it started, whatever it ran (a program that cannot be executed included).
    const startAt = new Map<string, number>();
    for (const r of each) {
      const attempt = `${r.task}.${r.attempt}`;
      if (r.type === 'start') startAt.set(attempt, r.at as number);
      else if (r.type === 'end' && startAt.has(attempt)) {
        assert.ok(
          (r.at as number) >= startAt.get(attempt)!,
          `attempt ${attempt} ends at ${r.at}, before its start at ${startAt.get(attempt)}`,
        );
      }
    }
  }
  return { launch: l, tasks, raw, ends };
}

/** Fail unless no process of the launch's tasks is left: every started pid gone, none with its launch folder. */
export function assertNothingLeft(o: Outcome): void {
  for (const r of o.raw) {
    if (r.type === 'start' && (r.pid as number) > 0)
      assert.ok(!isAlive(r.pid as number), `task pid ${r.pid} gone`);
  }
  assert.deepEqual(launchProcesses(o.launch.dir), [], 'no process of the launch is left');
}

/** The records a task's attempt is expected to have, as the suite compares them. */
export const want = {
  /** A start and an end (fields of the end record: state, exit_code, signal, reason, retry). */
  attempt(l: TestLaunch, task: number, attempt: number, end: Rec): Rec[] {
    const log = (ext: string) => path.join(l.settings.logDir, `${task}.${attempt}.${ext}`);
    return [
      { type: 'start', task, attempt, gpus: null, out: log('out'), err: log('err') },
      { type: 'end', task, attempt, ...end },
    ];
  },
  skip: (task: number): Rec[] => [{ type: 'skip', task, state: 'cancelled' }],
};

/**
 * The text of a task's log of an attempt ('' when there is none): the file its start record names, or the byte
 * range of it that the start and end records give (a slot's segment).
 */
export function logOf(o: Outcome, task: number, ext: 'out' | 'err', attempt = 1): string {
  const mine = (type: string) =>
    o.raw.find((r) => r.type === type && r.task === task && r.attempt === attempt);
  const start = mine('start');
  const file = start ? String(start[ext]) : path.join(o.launch.settings.logDir, `${task}.${attempt}.${ext}`);
  if (!fs.existsSync(file)) return '';
  const text = fs.readFileSync(file);
  const from = start?.[`${ext}_off`];
  if (typeof from !== 'number') return text.toString('utf8');
  const to = mine('end')?.[`${ext}_end`];
  return text.subarray(from, typeof to === 'number' ? to : undefined).toString('utf8');
}
