import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { JobStatus, ListedTask } from '../helpers/contract.js';
import { type RunResult, runDrover, watchStatus } from '../helpers/drover.js';
import { isAlive, pidIn, waitFor } from '../helpers/workspace.js';
import type { BackendUnderTest, Site } from './backend.js';

/** The scenarios' verbs: drover commands run in a site, through the real CLI only. */

/**
 * Run `drover ARGS` in the site (extra environment on top of the site's). Scenarios run side by side, so their
 * commands overlap by chance: in the developer's loop they take turns in the test's process (RunOptions.queue);
 * `atOnce` is for the commands a scenario runs at the same time on purpose.
 */
export function drover(
  site: Site,
  args: string[],
  env: Record<string, string> = {},
  atOnce = false,
): Promise<RunResult> {
  return runDrover(args, { cwd: site.cwd, env: { ...site.env, ...env }, queue: !atOnce });
}

/** Run drover expecting exit 0 and JSON on stdout. */
export async function droverJson<T>(
  site: Site,
  args: string[],
  env: Record<string, string> = {},
): Promise<T> {
  const r = await drover(site, args, env);
  assert.equal(r.code, 0, `drover ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}

/** Write a shell script into the site's folder. */
export function script(site: Site, name: string, body: string): void {
  fs.writeFileSync(path.join(site.cwd, name), body);
}

/** `drover prelaunch +command CMD +jobname JOB +pos-arg VALUES...`. */
export async function prelaunch(
  site: Site,
  job: string,
  command: string,
  values: (string | number)[],
): Promise<void> {
  const r = await drover(site, [
    'prelaunch',
    '+command',
    command,
    '+jobname',
    job,
    '+pos-arg',
    ...values.map(String),
    '+q',
  ]);
  assert.equal(r.code, 0, r.stderr);
}

/** What `drover launch --json` prints (the fields every backend prints). */
export interface Launched {
  jobname: string;
  launch: string | null;
  backend: string;
  tasks: number;
  tasklist: string;
}

/** `drover launch` of a job on the site's backend, returning at once; `after` goes after `--`. */
export function launch(
  site: Site,
  job: string,
  args: string[] = [],
  after: string[] = [],
  env: Record<string, string> = {},
) {
  const tail = after.length > 0 ? ['--', ...after] : [];
  return droverJson<Launched>(
    site,
    ['launch', ...site.launch, ...site.background, '--jobname', job, '--json', ...args, ...tail],
    env,
  );
}

/** `drover status JOB --json`, with its list of tasks that did not succeed. */
export interface Status extends JobStatus {
  failed: { task: number; state: string; exit_code: number | null; reason: string | null }[];
}

/** `drover status JOB --json`. */
export function status(site: Site, job: string, env: Record<string, string> = {}): Promise<Status> {
  return droverJson<Status>(site, ['status', job, '--json'], env);
}

/** `drover list --jobname JOB --json`. */
export function list(site: Site, job: string, env: Record<string, string> = {}): Promise<ListedTask[]> {
  return droverJson<ListedTask[]>(site, ['list', '--jobname', job, '--json'], env);
}

/** One attempt of `drover list JOB --attempts --json`. */
export interface ListedAttempt {
  task: number;
  attempt: number;
  state: string;
  exit_code: number | null;
  signal: string | null;
  reason: string | null;
}

/** `drover list JOB --attempts --json`. */
export function attempts(site: Site, job: string): Promise<ListedAttempt[]> {
  return droverJson<ListedAttempt[]>(site, ['list', job, '--attempts', '--json']);
}

/** The output (stdout, or stderr) of a task's latest attempt, by `drover logs`. */
export async function logOf(site: Site, job: string, task: number, err = false): Promise<string> {
  const r = await drover(site, ['logs', job, String(task), ...(err ? ['--err'] : [])]);
  assert.equal(r.code, 0, r.stderr);
  return r.stdout;
}

/**
 * Follow the job (`drover watch JOB --json`) until a status that `done` accepts; returns that status. The watcher
 * reads once a second (or every `pollMs` if longer): on the Slurm fake's conformance that took 131 s of CPU where
 * reading every 500 ms took 142 s and polling `drover status` 143-156 s.
 */
export function waitStatus(
  b: BackendUnderTest,
  site: Site,
  job: string,
  what: string,
  done: (s: Status) => boolean,
  timeoutMs = b.settleMs,
  env: Record<string, string> = {},
): Promise<Status> {
  return watchStatus<Status>(
    job,
    { cwd: site.cwd, env: { ...site.env, ...env } },
    done,
    timeoutMs,
    (last) => `${what} (job ${job} on ${b.name}; last seen: ${last ? seen(last) : 'no status'})`,
    Math.max(b.pollMs, 1000),
  );
}

/** A status in one line for a failure message: the counts that are not zero, and what did not succeed. */
function seen(s: Status): string {
  const counts = Object.entries(s.counts)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  const failed = s.failed.map((f) => `${f.task} ${f.state}${f.reason ? ` (${f.reason})` : ''}`).join('; ');
  const open = s.launches.filter((l) => l.open).map((l) => l.id);
  const launches = open.length > 0 ? `; open launches: ${open.join(', ')}` : '';
  return `${failed ? `${counts}; not succeeded: ${failed}` : counts || 'no tasks'}${launches}`;
}

/**
 * `drover status` once no task of the job is queued or running and its launches are closed: a task's end is final
 * only then (a requeued element's stopped attempt shows `killed` while the scheduler holds it to run again).
 */
export function settled(
  b: BackendUnderTest,
  site: Site,
  job: string,
  timeoutMs = b.settleMs,
): Promise<Status> {
  return waitStatus(
    b,
    site,
    job,
    'every task to end',
    (s) => s.counts.queued + s.counts.running === 0 && s.launches.every((l) => !l.open),
    timeoutMs,
  );
}

/** The pid a task wrote into `pids/<task>` (see SLEEPER), once it has. */
export function taskPid(site: Site, task: number, timeoutMs = 60_000): Promise<number> {
  const file = path.join(site.cwd, 'pids', String(task));
  return waitFor(`task ${task}'s pid`, () => pidIn(file), timeoutMs);
}

/** Wait until the process a task left in `pids/<task>` is gone (no task outlives its stop). */
export async function taskGone(site: Site, task: number, timeoutMs = 30_000): Promise<void> {
  const pid = await taskPid(site, task);
  await waitFor(`task ${task}'s process ${pid} to be gone`, () => !isAlive(pid), timeoutMs);
}

/**
 * A task script that notes its pid in `pids/$DROVER_TASK_ID` and sleeps (exec: the pid is the sleep's), so a test
 * can check that a stopped task's process is gone, on any backend.
 */
export const SLEEPER = 'mkdir -p pids\necho $$ > "pids/$DROVER_TASK_ID"\nexec sleep "$1"\n';

/**
 * A task script that waits until the test creates `go/$DROVER_TASK_ID`, then succeeds: the test decides when
 * each task ends.
 */
export const GATE =
  'mkdir -p go\nwhile [ ! -e "go/$DROVER_TASK_ID" ]; do sleep 0.2; done\necho "passed $DROVER_TASK_ID"\n';

/** Let a GATE task end. */
export function openGate(site: Site, task: number): void {
  fs.mkdirSync(path.join(site.cwd, 'go'), { recursive: true });
  fs.writeFileSync(path.join(site.cwd, 'go', String(task)), '');
}

/** Task ids of the tasks in a state. */
export function inState(tasks: ListedTask[], state: string): number[] {
  return tasks.filter((x) => x.state === state).map((x) => x.task);
}
