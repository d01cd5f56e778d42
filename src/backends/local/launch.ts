import path from 'node:path';
import { DroverError, ioError, isSystemError } from '../../errors.js';
import { writeFileAtomic } from '../../files.js';
import { anyStartRecorded } from '../../ledger/ingest.js';
import { ledgerError } from '../../ledger/open.js';
import {
  type GroupFile,
  type LaunchFile,
  type RunSettings,
  TaskFile,
  writeTaskFile,
} from '../../runner/group.js';
import { type LaunchMode, type LaunchOutcome, type LaunchPlan, ranInPart } from '../backend.js';
import { ingestWhileRunning } from './ingest-loop.js';
import { LAUNCH_DIR_VAR } from './leftovers.js';
import { runDetached, runForeground } from './submit.js';

/** The local runner's tasks, one JSON object a line, beside launch.json (which names it). */
const TASK_FILE = 'tasks.jsonl';

/** The values of `items` through `fn`, one at a time. */
function* map<T, U>(items: Iterable<T>, fn: (item: T) => U): IterableIterator<U> {
  for (const item of items) yield fn(item);
}

/** The runner's settings of a local launch: slots, header and footer, and how its tasks can be found. */
function localSettings(plan: LaunchPlan, dir: string): RunSettings {
  const { request, config } = plan;
  return {
    ...plan.settings,
    ...(request.maxTasks !== undefined ? { maxTasks: request.maxTasks } : {}),
    ...(request.cpus !== undefined ? { cpusPerTask: request.cpus } : {}),
    ...(request.gpus !== undefined ? { gpusPerTask: request.gpus } : {}),
    ...(config.header ? { header: config.header } : {}),
    ...(config.footer ? { footer: config.footer } : {}),
    // How drover finds this launch's task processes if the runner dies before it records them.
    env: { ...plan.settings.env, [LAUNCH_DIR_VAR]: dir },
    termState: 'cancelled',
  };
}

/**
 * Run a local launch: in the foreground with live progress (to the plan's observer), or detached. The configured
 * header and footer wrap each task's command. A dry run says how many tasks would run here.
 */
export async function launchLocal(plan: LaunchPlan, mode: LaunchMode): Promise<LaunchOutcome> {
  if (mode === 'dry-run')
    return { summary: `${plan.count} task(s) would run here`, commands: [], warnings: [] };
  const { ledger } = plan;
  const launch = plan.launch!;
  const settings = localSettings(plan, launch.dir);
  // The tasks go into a task file of their own, streamed from the ledger, and the runner reads it as its slots
  // free up: neither process holds a million tasks.
  const launchPath = path.join(launch.dir, 'launch.json');
  const taskPath = path.join(launch.dir, TASK_FILE);
  // A write that fails here (a full disk) throws: nothing started, and src/launch takes the launch back.
  const count = writeTaskFile(
    taskPath,
    map(plan.eachTask(), (t) => ({ id: t.id, command: t.command, attempt: t.attempt })),
  );
  const launchFile: LaunchFile = { ...settings, groups: { '1': { file: TASK_FILE, count } } };
  writeFileAtomic(launchPath, JSON.stringify(launchFile));
  const group: GroupFile = { ...settings, group: '1', tasks: new TaskFile(taskPath, count) };
  if (plan.detach) {
    const record = plan.recordHandles ?? (() => {});
    const h = runDetached(ledger, record, plan.drover.bin, launchPath, group, launch.dir);
    return {
      handles: h, // recorded already (recordHandles), before the runner was told to go
      summary: `${count} task(s) of '${plan.job.name}' running in the background (runner pid ${h.pid})`,
      warnings: [],
    };
  }
  // Records go into the ledger while tasks run, not all at the end: `drover status` elsewhere stays current
  // and cheap, and the work overlaps the tasks instead of adding to the launch's time.
  const stopIngesting = ingestWhileRunning(ledger, launch);
  try {
    const { interrupted } = await runForeground(group, plan.observe?.(count, plan.job.name));
    return {
      summary: `${count} task(s) of '${plan.job.name}' ran here`,
      warnings: [],
      ran: { interrupted },
    };
  } catch (err) {
    // Failed before any task started (the runner's files or the ledger refused a write): src/launch takes the
    // launch back. After some started, the launch happened: said so (ranInPart), and it stays.
    const e =
      err instanceof DroverError
        ? err
        : (ledgerError(err) ??
          (isSystemError(err)
            ? ioError(err)
            : new DroverError('backend', `the runner failed: ${String(err)}`, { cause: err })));
    throw anyStartRecorded(launch) ? ranInPart(e) : e;
  } finally {
    stopIngesting();
  }
}
