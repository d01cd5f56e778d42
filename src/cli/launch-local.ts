import fs from 'node:fs';
import path from 'node:path';
import type { LaunchRequest } from '../backends/backend.js';
import { LAUNCH_DIR_VAR } from '../backends/local/leftovers.js';
import { runDetached, runForeground, signalExitCode } from '../backends/local/submit.js';
import { refresh } from '../backends/refresh.js';
import { DroverError, ioError, isSystemError, toDroverError } from '../errors.js';
import { ingestLaunch, recordsDir } from '../ledger/ingest.js';
import type { JobRow } from '../ledger/jobs.js';
import { deleteLaunch, type LaunchRow, type LaunchTask } from '../ledger/launches.js';
import { ledgerError } from '../ledger/open.js';
import { launchCounts } from '../ledger/queries.js';
import { type GroupFile, type LaunchFile, type RunSettings, writeFileAtomic } from '../runner/group.js';
import type { LaunchOptions } from './launch.js';
import { note, printJson } from './output.js';
import { printLaunchSummary } from './summary.js';
import type { Workspace } from './workspace.js';

/** How often a foreground launch moves its runner's records into the ledger. */
const INGEST_EVERY_MS = 500;

/** A launch made and recorded, ready for its backend. */
export interface PreparedLaunch {
  ws: Workspace;
  job: JobRow;
  launch: LaunchRow;
  tasks: LaunchTask[];
  settings: RunSettings;
  config: Record<string, string>;
  request: LaunchRequest;
  opts: LaunchOptions;
}

/**
 * A launch that could not be handed to its runner (a full or read-only disk) did not happen: it leaves the
 * ledger and its folder goes, as a cluster launch whose submission failed. (When the ledger refuses even that,
 * the error that brought us here is the one to report.)
 */
export function discardLaunch(ws: Workspace, launch: LaunchRow): void {
  try {
    deleteLaunch(ws.ledger, launch.id);
  } catch {}
  fs.rmSync(launch.dir, { recursive: true, force: true });
}

/** True when a runner of the launch recorded a task's start (or tried to). */
function startedAny(launch: LaunchRow): boolean {
  const dir = recordsDir(launch);
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return false;
  }
  return names.some((n) => {
    try {
      return fs.readFileSync(path.join(dir, n), 'utf8').includes('"type":"start"');
    } catch {
      return true;
    }
  });
}

/**
 * Run a local launch: in the foreground with live progress (exit 1 if any task did not succeed), or detached.
 * The configured header and footer wrap each task's command.
 */
export async function launchLocal(p: PreparedLaunch): Promise<number> {
  const { ws, job, launch, tasks, opts } = p;
  const settings: RunSettings = {
    ...p.settings,
    ...(p.request.maxTasks !== undefined ? { maxTasks: p.request.maxTasks } : {}),
    ...(p.request.cpus !== undefined ? { cpusPerTask: p.request.cpus } : {}),
    ...(p.request.gpus !== undefined ? { gpusPerTask: p.request.gpus } : {}),
    ...(p.config.header ? { header: p.config.header } : {}),
    ...(p.config.footer ? { footer: p.config.footer } : {}),
    // How drover finds this launch's task processes if the runner dies before it records them.
    env: { ...p.settings.env, [LAUNCH_DIR_VAR]: launch.dir },
    termState: 'cancelled',
  };
  const groupTasks = tasks.map((t) => ({ id: t.id, command: t.command, attempt: t.attempt }));
  const launchFile: LaunchFile = { ...settings, groups: { '1': groupTasks } };
  const launchPath = path.join(launch.dir, 'launch.json');
  try {
    writeFileAtomic(launchPath, JSON.stringify(launchFile));
  } catch (err) {
    discardLaunch(ws, launch);
    throw err;
  }
  const group: GroupFile = { ...settings, group: '1', tasks: groupTasks };
  const base = {
    jobname: job.name,
    launch: String(launch.id),
    backend: 'local',
    tasks: tasks.length,
    tasklist: launch.tasklist,
  };

  if (opts.detach) {
    const h = runDetached(ws.ledger, launchPath, group, launch.dir);
    if (opts.json) printJson({ ...base, pid: h.pid });
    else {
      note(
        `launch ${launch.id}: ${tasks.length} task(s) of '${job.name}' running in the background (runner pid ${h.pid}); follow with: drover status ${job.name}`,
      );
    }
    return 0;
  }
  let result: Awaited<ReturnType<typeof runForeground>>;
  // Records go into the ledger while tasks run, not all at the end: `drover status` elsewhere stays current
  // and cheap, and the work overlaps the tasks instead of adding to the launch's time.
  const ingest = setInterval(() => {
    try {
      ingestLaunch(ws.ledger, launch);
    } catch {
      // The ledger is busy; the ingest after the run gets these records.
    }
  }, INGEST_EVERY_MS);
  try {
    result = await runForeground(ws.ledger, group, { progress: !opts.quiet && !opts.json });
  } catch (err) {
    // It failed before any task started (the runner's files or the ledger refused a write): no launch.
    if (!startedAny(launch)) discardLaunch(ws, launch);
    if (err instanceof DroverError) throw err;
    throw (
      ledgerError(err) ??
      (isSystemError(err)
        ? ioError(err)
        : new DroverError('backend', `the runner failed: ${String(err)}`, { cause: err }))
    );
  } finally {
    clearInterval(ingest);
  }
  if (result.interrupted) {
    // Stopped by the user: that is the answer, even when the ledger cannot take the records now (a full disk).
    try {
      refresh(ws.ledger, job.id);
    } catch (err) {
      note(`drover: ${toDroverError(ledgerError(err) ?? (isSystemError(err) ? ioError(err) : err)).message}`);
      return signalExitCode(result.interrupted);
    }
  } else refresh(ws.ledger, job.id);
  const counts = launchCounts(ws.ledger, launch.id);
  // After SIGHUP no terminal is left to read the summary; output to a file or a pipe (nohup, a log) still gets it.
  if (result.interrupted === 'SIGHUP' && process.stdout.isTTY) return signalExitCode('SIGHUP');
  if (opts.json) printJson({ ...base, counts });
  else printLaunchSummary(ws.ledger, job.id, launch.id, job.name);
  if (result.interrupted) return signalExitCode(result.interrupted);
  return counts.succeeded === tasks.length ? 0 : 1;
}
