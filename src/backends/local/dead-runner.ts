import fs from 'node:fs';
import path from 'node:path';
import { ingestLaunch } from '../../ledger/ingest.js';
import { launchUnfinishedWithAttempts } from '../../ledger/launch-tasks.js';
import type { LaunchRow } from '../../ledger/launches.js';
import type { Ledger } from '../../ledger/ledger.js';
import { runningProcesses } from '../../ledger/reconcile-reads.js';
import { markUnfinished, recordStart } from '../../ledger/transitions.js';
import { attemptFile } from '../../protocol/log-slices.js';
import type { StartRecord } from '../../protocol/records.js';
import type { LaunchFile } from '../../runner/group.js';
import { processStartedAt, shortHostname } from '../../util/proc.js';
import { killAndWait, recordedProcess, type TaskProcess, taskProcesses } from './leftovers.js';

/** A task the dead runner left unfinished in the ledger, and what is known of it on this host. */
export interface Unfinished {
  task: number;
  state: 'queued' | 'running';
  /** A queued task that did start (a process of it, or its log file, exists): its attempt number. */
  startedAttempt?: number;
  /** A process of it still runs after the attempt to stop it. */
  alive: boolean;
}

/** What becomes of each unfinished task of a launch whose runner is gone. */
export interface DeadRunnerVerdict {
  /** Started, and every process of it is gone: `lost`. */
  lost: number[];
  /** Never started: `cancelled` (its launch ended before it ran, as a cancel of a queued task records). */
  cancelled: number[];
  /** A process of it runs and could not be stopped: it stays `running` (never `lost` while alive). */
  running: number[];
}

/**
 * Decide the fate of the unfinished tasks of a launch whose runner is gone (pure: the facts are gathered by
 * settleDeadRunner). `lost` means no process of the attempt is alive (docs/concepts.md, invariant 2); a task with no
 * attempt in the launch cannot be lost.
 */
export function deadRunnerVerdict(tasks: readonly Unfinished[]): DeadRunnerVerdict {
  const v: DeadRunnerVerdict = { lost: [], cancelled: [], running: [] };
  for (const t of tasks) {
    const started = t.state === 'running' || t.startedAttempt !== undefined;
    if (!started) v.cancelled.push(t.task);
    else if (t.alive) v.running.push(t.task);
    else v.lost.push(t.task);
  }
  return v;
}

/**
 * The folder of a launch's log files, from its launch file: undefined if it was never written, or when its tasks
 * wrote segments (no file per attempt tells whether one started; where a lost start's output is, is unknown).
 */
function logDirOf(launch: LaunchRow): string | undefined {
  try {
    const file = JSON.parse(fs.readFileSync(path.join(launch.dir, 'launch.json'), 'utf8')) as LaunchFile;
    return file.logs === 'segments' ? undefined : file.logDir;
  } catch {
    return undefined;
  }
}

/**
 * A local launch's runner is gone without finishing (SIGKILL, a crash, its process group killed). Stop every
 * process its tasks left (found by recorded pid and by environment, so also tasks whose start record was lost
 * with the runner), wait for them to be gone, and record each unfinished task: `lost` if it started, `cancelled`
 * if it never did, still `running` if a process of it could not be stopped. Called inside a write transaction.
 */
export function settleDeadRunner(ledger: Ledger, launch: LaunchRow, runnerPid: number): void {
  // Records the runner wrote after the last ingest and before it died.
  ingestLaunch(ledger, launch);
  const rows = launchUnfinishedWithAttempts(ledger, launch.job_id, launch.id);
  const recorded = runningProcesses(ledger, launch.id);
  // Every process of the launch goes: those of unfinished tasks, and any a finished task left outside its group.
  const found: TaskProcess[] = taskProcesses(new Set([launch.dir]));
  for (const r of recorded) {
    const p = recordedProcess(r.task, r.pid, r.started_at);
    if (p) found.push(p);
  }
  if (rows.length === 0 && found.length === 0) return;
  const alive = new Set(killAndWait(found).map((p) => p.task));
  const attemptSeen = new Map<number, TaskProcess>();
  for (const p of found) if (p.attempt > 0) attemptSeen.set(p.task, p);

  let logDir: string | undefined | null = null;
  const unfinished: Unfinished[] = rows.map((r) => {
    const u: Unfinished = { task: r.task, state: r.state, alive: alive.has(r.task) };
    if (r.state !== 'queued') return u;
    const seen = attemptSeen.get(r.task);
    const attempt = seen?.attempt ?? r.attempts + 1;
    if (logDir === null) logDir = logDirOf(launch);
    const out = logDir && attemptFile(logDir, r.task, attempt, 'out');
    const logged = out ? fileTime(out) : undefined;
    if (seen || logged !== undefined) {
      u.startedAttempt = attempt;
      const start: StartRecord = {
        type: 'start',
        task: r.task,
        attempt,
        at: (seen && processStartedAt(seen.pid)) || logged || Date.now() / 1000,
        pid: seen?.pid ?? 0,
        slot: -1,
        gpus: null,
        host: shortHostname(),
        out: out || '',
        err: logDir ? attemptFile(logDir, r.task, attempt, 'err') : '',
      };
      recordStart(ledger, launch.job_id, launch.id, start);
    }
    return u;
  });
  const v = deadRunnerVerdict(unfinished);
  markUnfinished(
    ledger,
    launch.job_id,
    launch.id,
    v.lost,
    'lost',
    `runner process ${runnerPid} ended without a record of it`,
  );
  markUnfinished(
    ledger,
    launch.job_id,
    launch.id,
    v.cancelled,
    'cancelled',
    `runner process ${runnerPid} ended before starting it`,
  );
}

/** When a file was made (Unix seconds; its last write where the file system keeps no birth time), or undefined. */
function fileTime(file: string): number | undefined {
  try {
    const st = fs.statSync(file);
    return (st.birthtimeMs || st.mtimeMs) / 1000;
  } catch {
    return undefined;
  }
}
