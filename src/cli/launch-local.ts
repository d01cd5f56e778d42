import path from 'node:path';
import type { LaunchRequest } from '../backends/backend.js';
import { LAUNCH_DIR_VAR } from '../backends/local/leftovers.js';
import { runDetached, runForeground, signalExitCode } from '../backends/local/submit.js';
import { refresh } from '../backends/refresh.js';
import { DroverError } from '../errors.js';
import { ingestLaunch } from '../ledger/ingest.js';
import type { JobRow } from '../ledger/jobs.js';
import type { LaunchRow, LaunchTask } from '../ledger/launches.js';
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
  writeFileAtomic(launchPath, JSON.stringify(launchFile));
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
    throw err instanceof DroverError
      ? err
      : new DroverError('backend', `the runner failed: ${String(err)}`, { cause: err });
  } finally {
    clearInterval(ingest);
  }
  refresh(ws.ledger, job.id);
  const counts = launchCounts(ws.ledger, launch.id);
  // After SIGHUP no terminal is left to read the summary.
  if (result.interrupted === 'SIGHUP') return signalExitCode('SIGHUP');
  if (opts.json) printJson({ ...base, counts });
  else printLaunchSummary(ws.ledger, job.id, launch.id, job.name);
  if (result.interrupted) return signalExitCode(result.interrupted);
  return counts.succeeded === tasks.length ? 0 : 1;
}
