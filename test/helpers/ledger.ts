import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { syncJobTasks } from '../../src/ledger/job-sync.js';
import type { JobRow } from '../../src/ledger/jobs.js';
import { LATEST_ATTEMPT_JOIN, LATEST_MEMBERS } from '../../src/ledger/latest-attempt.js';
import type { LaunchRow } from '../../src/ledger/launches.js';
import { Ledger } from '../../src/ledger/ledger.js';
import { MIGRATIONS } from '../../src/ledger/migrations.js';
import { createLaunch } from '../../src/ledger/transitions.js';
import { type DroverPaths, droverPaths } from '../../src/paths.js';
import type { EndRecord, StartRecord } from '../../src/protocol/records.js';
import type { State } from '../../src/protocol/states.js';

/** A real ledger file in a fresh temp folder, closed and removed after the test. */
export function tempLedger(t: { after(fn: () => void): void }): Ledger {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drover-ledger-'));
  const ledger = Ledger.open(droverPaths(path.join(dir, '.drover')));
  t.after(() => {
    ledger.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return ledger;
}

/** Create job `name` with `n` tasks (`echo N`). */
export function makeJob(ledger: Ledger, name: string, n: number): JobRow {
  return syncJob(
    ledger,
    name,
    new Map(Array.from({ length: n }, (_, i) => [i + 1, { command: `echo ${i + 1}`, tag: '' }])),
  );
}

/** Make job `name` hold exactly these tasks, as a jobfile read again would (a new command: a new revision). */
export function syncJob(
  ledger: Ledger,
  name: string,
  entries: ReadonlyMap<number, { command: string; tag: string }>,
): JobRow {
  return syncJobTasks(ledger, name, path.join(ledger.paths.root, 'jobs', name, 'jobs.json'), entries, null)
    .job;
}

/**
 * A `.drover/` folder in a fresh temp folder (removed after the test) whose ledger has the schema as drover made
 * it at `version` (the first `version` migrations), open for the test to fill and close: opening it with
 * Ledger.open then migrates it to the newest.
 */
export function ledgerAtSchema(
  t: { after(fn: () => void): void },
  version: number,
): { paths: DroverPaths; old: Database.Database } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `drover-schema${version}-`));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const paths = droverPaths(path.join(dir, '.drover'));
  fs.mkdirSync(paths.root, { recursive: true });
  const old = new Database(paths.ledger);
  old.pragma('journal_mode = WAL');
  for (let v = 0; v < version; v++) old.exec(MIGRATIONS[v]!);
  old.pragma(`user_version = ${version}`);
  return { paths, old };
}

/** Launch some tasks of a job (they become queued). */
export function launch(ledger: Ledger, job: JobRow, ids: number[]): LaunchRow {
  return createLaunch(ledger, job, 'local', ids, {}, (id) => ledger.paths.launchDir(job.name, id)).launch;
}

/** A start record. */
export function start(task: number, attempt: number, at = 100): StartRecord {
  return { type: 'start', task, attempt, at, pid: 4242, slot: 0, gpus: null, host: 'h', out: 'o', err: 'e' };
}

/** An end record. */
export function end(
  task: number,
  attempt: number,
  state: EndRecord['state'],
  exitCode: number | null,
  at = 101,
): EndRecord {
  return { type: 'end', task, attempt, at, state, exit_code: exitCode, signal: null };
}

/** A task's row: state, exit code, attempts, newest launch. */
export function taskRow(ledger: Ledger, job: JobRow, task: number) {
  return ledger.db
    .prepare('SELECT state, exit_code, attempts, last_launch_id FROM tasks WHERE job_id = ? AND id = ?')
    .get(job.id, task) as {
    state: State;
    exit_code: number | null;
    attempts: number;
    last_launch_id: number | null;
  };
}

/** A task's state within a launch. */
export function launchState(ledger: Ledger, launchId: number, task: number): State | undefined {
  return (
    ledger.db
      .prepare('SELECT state FROM launch_tasks WHERE launch_id = ? AND task_id = ?')
      .get(launchId, task) as { state: State } | undefined
  )?.state;
}

/** Every attempt row of a task, oldest first. */
export function attemptRows(ledger: Ledger, job: JobRow, task: number) {
  return ledger.db
    .prepare(
      'SELECT attempt, launch_id, state, exit_code, ended_at, reason FROM attempts WHERE job_id = ? AND task_id = ? ORDER BY attempt',
    )
    .all(job.id, task) as {
    attempt: number;
    launch_id: number;
    state: State;
    exit_code: number | null;
    ended_at: number | null;
    reason: string | null;
  }[];
}

/**
 * The tasks of a job whose kept latest attempt (`tasks.latest`) is not what the latest attempt join gives: the
 * transitions keep the two the same (src/ledger/latest-attempt.ts), so a test expects none.
 */
export function latestDrift(
  ledger: Ledger,
  jobId: number,
): { id: number; latest: string | null; want: string | null }[] {
  return ledger.db
    .prepare(
      `SELECT id, latest, want FROM (
         SELECT t.id, t.latest, CASE WHEN a.job_id IS NULL THEN NULL ELSE ${LATEST_MEMBERS} END AS want
         FROM tasks t ${LATEST_ATTEMPT_JOIN} WHERE t.job_id = ?)
       WHERE latest IS NOT want ORDER BY id`,
    )
    .all(jobId) as { id: number; latest: string | null; want: string | null }[];
}
