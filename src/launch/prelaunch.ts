import fs from 'node:fs';
import path from 'node:path';
import { refresh } from '../backends/refresh.js';
import { usageError } from '../errors.js';
import { recordHistory } from '../ledger/history.js';
import { type JobChanges, JobSync } from '../ledger/job-sync.js';
import { findJob } from '../ledger/jobs.js';
import { openLaunches } from '../ledger/launches.js';
import type { Ledger } from '../ledger/ledger.js';
import {
  BATCH_SIZE,
  batchesOfTasks,
  emptyBatch,
  type JobEntry,
  JobfileWriter,
  jobfilePath,
  nextTaskId,
  ParamsFileWriter,
  type ParamsRecord,
  type PrelaunchSpec,
  paramsFileLimit,
  paramsFilePath,
  paramsOfEntries,
  planSweep,
  readJobfile,
  readParamsFile,
  SweepFilesWorker,
  type SweepPlan,
  type SweepTask,
  type TaskBatch,
} from '../sweep/index.js';
import { MAX_JOB_TASKS } from '../util/limits.js';
import type { Workspace } from './job.js';
import { JobfileUndo } from './jobfile-undo.js';
import { jobStamp } from './load-job.js';

/** What a prelaunch is given besides its spec. */
export interface PrelaunchInput {
  /** The tasks of `+commands-file`, numbered from 1, read and checked by the caller; else the spec's sweep. */
  commands?: { tasks: SweepTask[]; shown: string };
  /** The command line, for the history. */
  argv: string[];
  /** A warning line for the user (a damaged params file dropped). */
  warn(line: string): void;
}

/** What a prelaunch made: the new tasks, the job's task count, and what changed for the ledger. */
export interface Prelaunched {
  fresh: SweepPlan | SweepTask[];
  total: number;
  changes: JobChanges;
}

/**
 * Make or extend (`+append`) a job from a sweep or a file of commands: its jobfile and params file, and its tasks
 * in the ledger, in one write transaction. The ledger's write lock makes the read-modify-write of the jobfile
 * atomic against concurrent prelaunches; if the ledger then cannot take the change, both files go back to what
 * they were (nothing half-written).
 */
export function prelaunchJob(ws: Workspace, spec: PrelaunchSpec, input: PrelaunchInput): Prelaunched {
  const jobfile =
    spec.jobfile !== undefined
      ? path.resolve(jobfilePath(spec.jobfile, spec.jobname))
      : ws.paths.jobfile(spec.jobname);
  const known = findJob(ws.ledger, spec.jobname);
  // Fresh states first: a launch that has ended since is not in the way.
  if (known) refresh(ws.ledger, known.id);
  const paramsFile = paramsFilePath(jobfile);
  const undo = new JobfileUndo(jobfile);
  const undoParams = new JobfileUndo(paramsFile);
  return undo.around(() =>
    undoParams.around(() =>
      ws.ledger.writeUnchecked(() => {
        if (!spec.append) refuseWhileLaunched(ws.ledger, spec.jobname);
        const existing = spec.append ? readJobfile(jobfile) : new Map<number, JobEntry>();
        const startId = nextTaskId(existing);
        const fresh = input.commands
          ? renumber(input.commands.tasks, startId, input.commands.shown)
          : planSweep(spec, { startId });
        const records = spec.append
          ? existingParams(jobfile, paramsFile, input.warn)
          : new Map<number, ParamsRecord>();
        fs.mkdirSync(path.dirname(jobfile), { recursive: true });
        undo.keep();
        undoParams.keep();
        const changes = writeJob(ws.ledger, spec.jobname, { jobfile, paramsFile, existing, records, fresh });
        recordHistory(ws.ledger, { kind: 'prelaunch', jobname: spec.jobname, argv: input.argv });
        return { fresh, total: existing.size + taskCount(fresh), changes };
      }),
    ),
  );
}

/**
 * From this many new tasks a sweep's files are written by a worker thread (SweepFilesWorker), in parallel with
 * the ledger; below it, starting the thread costs more than it saves.
 */
const WORKER_MIN_TASKS = 8192;

/** What a prelaunch writes: the job's files, the tasks it keeps (+append) and its new ones. */
interface JobWrite {
  jobfile: string;
  paramsFile: string;
  /** The jobfile's entries before (+append), in its order. */
  existing: ReadonlyMap<number, JobEntry>;
  /** The params file's records before (+append). */
  records: ReadonlyMap<number, ParamsRecord>;
  /** The new tasks: a planned sweep, or a commands file's. */
  fresh: SweepPlan | SweepTask[];
}

/** The new tasks, a batch at a time. */
export function batchesOf(fresh: SweepPlan | SweepTask[]): Iterable<TaskBatch> {
  return Array.isArray(fresh) ? batchesOfTasks(fresh) : fresh.batches();
}

function taskCount(fresh: SweepPlan | SweepTask[]): number {
  return Array.isArray(fresh) ? fresh.length : fresh.count;
}

/**
 * Write the job's params file and jobfile (each replaced atomically, params first) and sync the ledger's tasks,
 * streaming the new tasks through all three a batch at a time: a sweep of a million tasks takes the memory of
 * one batch; from WORKER_MIN_TASKS new tasks of a sweep, a worker thread writes the files while this thread
 * fills the ledger. Runs inside the ledger's write transaction; a failure before the files are renamed leaves
 * both as they were.
 */
function writeJob(ledger: Ledger, jobname: string, w: JobWrite): JobChanges {
  const first = nextTaskId(w.existing);
  const last = first + taskCount(w.fresh) - 1;
  const params = new ParamsFileWriter(w.paramsFile);
  let job: JobfileWriter | undefined;
  try {
    job = new JobfileWriter(w.jobfile);
    const sync = new JobSync(ledger, jobname, { bulk: taskCount(w.fresh) >= WORKER_MIN_TASKS });
    // The earlier records (+append), but those of the ids the new tasks take: theirs are the new tasks'.
    for (const [id, r] of w.records)
      if (id < first || id > last) params.add(id, r.command, JSON.stringify(r.params));
    for (const b of existingBatches(w.existing, w.records)) {
      job.addBatch(b);
      sync.add(b);
    }
    if (!Array.isArray(w.fresh) && w.fresh.count >= WORKER_MIN_TASKS) {
      // A big sweep: a worker thread writes both files from the sweep while this one fills the ledger.
      const files = new SweepFilesWorker(w.fresh, {
        jobfile: job,
        paramsFile: params,
        paths: { jobfile: w.jobfile, paramsFile: w.paramsFile },
      });
      try {
        for (const b of w.fresh.batches()) sync.add(b);
        files.finish();
      } catch (err) {
        files.stop();
        throw err;
      }
    } else {
      for (const b of batchesOf(w.fresh)) {
        params.addBatch(b);
        job.addBatch(b);
        sync.add(b);
      }
    }
    params.commit();
    job.commit();
    return sync.finish(w.jobfile, jobStamp(w.jobfile) ?? null).changes;
  } catch (err) {
    params.abort();
    job?.abort();
    throw err;
  }
}

/** The jobfile's earlier entries, in its order, each with the params recorded for its command (none otherwise). */
function* existingBatches(
  existing: ReadonlyMap<number, JobEntry>,
  records: ReadonlyMap<number, ParamsRecord>,
): Generator<TaskBatch> {
  let batch = emptyBatch();
  for (const [id, e] of paramsOfEntries(existing, records)) {
    batch.ids.push(id);
    batch.commands.push(e.command);
    batch.tags.push(e.tag);
    batch.params.push(e.params);
    if (batch.ids.length === BATCH_SIZE) {
      yield batch;
      batch = emptyBatch();
    }
  }
  if (batch.ids.length > 0) yield batch;
}

/** The file's tasks numbered from `startId` (after the job's tasks, with +append). */
function renumber(tasks: SweepTask[], startId: number, shown: string): SweepTask[] {
  if (startId + tasks.length - 1 > MAX_JOB_TASKS)
    throw usageError(
      `+commands-file ${shown} would give the job more tasks than it may have (${MAX_JOB_TASKS})`,
    );
  return tasks.map((t, i) => ({ ...t, id: startId + i }));
}

/** The params file's records before `+append` adds to it; a damaged one is dropped with a warning. */
function existingParams(
  jobfile: string,
  paramsFile: string,
  warn: (line: string) => void,
): Map<number, ParamsRecord> {
  const read = readParamsFile(paramsFile, paramsFileLimit(fs.statSync(jobfile).size));
  if (read.problem !== undefined)
    warn(`drover: warning: ${paramsFile} ${read.problem}; the earlier tasks' params are dropped from it`);
  return read.records;
}

/**
 * A job that a launch may still run cannot get new commands: the running attempts would be history of a command
 * the jobfile no longer has, and their tasks could be launched again while they run. `+append` only adds tasks.
 */
function refuseWhileLaunched(ledger: Ledger, jobname: string): void {
  const job = findJob(ledger, jobname);
  if (!job) return;
  const open = openLaunches(ledger, job.id);
  if (open.length === 0) return;
  const ids = open.map((l) => l.id).join(', ');
  throw usageError(
    `job '${jobname}' has tasks queued or running (launch ${ids}): wait for them or cancel them (drover cancel ${jobname}) before prelaunching it again, or add tasks with +append`,
  );
}
