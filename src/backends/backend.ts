import type { JobRow } from '../ledger/jobs.js';
import type { LaunchRow, LaunchTask } from '../ledger/launches.js';
import type { Ledger } from '../ledger/ledger.js';
import type { DroverPaths } from '../paths.js';
import type { LogsMode, RunSettings } from '../runner/group.js';
import type { TaskEnd } from '../runner/runner.js';
import type { WarnSignal } from '../util/warn-signal.js';

/** Resources and scheduler options of a launch, as the user asked for them (flags over config). */
export interface LaunchRequest {
  /** CPUs per task (local, packed: per task; one task per element: per element). */
  cpus?: number;
  /** GPUs per task. */
  gpus?: number;
  /** Memory in MiB, parsed from --mem by the one size grammar (util/size.ts); each backend renders it. */
  memMb?: number;
  /** Time limit in seconds: of each array element on clusters, of each task locally. */
  duration?: number;
  /** Tasks running at once: `%N` throttle on Slurm, `-tc N` on Grid Engine. */
  maxTasks?: number;
  /** Tasks packed into each array element (1: one task per element). */
  tasksPerNode: number;
  /** Slots of the runner in each packed element (default: CPUs the scheduler gave it). */
  maxTasksPerNode?: number;
  partition?: string;
  account?: string;
  qos?: string;
  /** Start only after this scheduler job id ended well. */
  after?: string;
  /** Arguments after `--`, passed to the scheduler's submit command as they are. */
  extraArgs: string[];
  /**
   * `--signal` (the spec's, added by launch()): schedulers that can send it themselves are asked to as well
   * (Slurm's `--signal=B:`); runners time it in every case (RunSettings.warnSignal).
   */
  signal?: WarnSignal;
  /**
   * `--requeue N` (the spec's, added by launch()): schedulers are asked to keep a preempted element to run it
   * again (Slurm `--requeue`, Grid Engine `-r y`), and never to when it is 0 or omitted (a rerun element would run
   * its tasks again under the same attempt numbers); the element's next runner goes on (runner/restart.ts).
   */
  requeue?: number;
}

/** Everything a cluster backend needs to submit one launch. */
export interface SubmitRequest {
  ledger: Ledger;
  paths: DroverPaths;
  launch: LaunchRow;
  /** The launch's tasks in id order, with the attempt number each one starts at. */
  tasks: LaunchTask[];
  /** What every runner of the launch shares (the backend adds the groups and writes launch.json). */
  settings: RunSettings;
  request: LaunchRequest;
  /** The backend's section of the config (header, footer, partition, ...). */
  config: Record<string, string>;
  /** Path of the drover entry script and of the node binary, to start runners on nodes. */
  drover: { bin: string; node: string };
}

/** What `launch --dry-run` asks a cluster backend: its submissions for these tasks, with nothing written. */
export interface PreviewRequest {
  job: string;
  tasks: LaunchTask[];
  request: LaunchRequest;
  config: Record<string, string>;
  /** The folder the launch would get (its scripts and logs go there). */
  dir: string;
}

/** The scheduler commands a launch would run, as argv (program first), and what to know about them. */
export interface Preview {
  commands: string[][];
  warnings: string[];
}

/** What a cluster backend says about a submission, for the summary and --json. */
export interface SubmitResult {
  /** Backend handles, stored with the launch (array job ids, ...). */
  handles: object;
  /** One line for people: what was submitted. */
  summary: string;
  /** Warnings (e.g. a request the cluster can never satisfy). */
  warnings: string[];
}

/** `submit` runs the launch; `dry-run` says what submitting would do and changes nothing. */
export type LaunchMode = 'submit' | 'dry-run';

/** How a launch's tasks are watched while they run here: the local backend's foreground runner reports to it. */
export interface RunObserver {
  started(): void;
  ended(end: TaskEnd): void;
  stop(): void;
  /** The terminal went away (SIGHUP): draw nothing more. */
  detach(): void;
}

/**
 * One launch, resolved by src/launch/: the job, its tasks, and everything its runners share. In `dry-run` mode
 * `launch` is undefined (nothing was recorded) and `dir` is the folder the launch would get.
 */
export interface LaunchPlan {
  ledger: Ledger;
  paths: DroverPaths;
  /** Where it runs: `local`, `slurm`, `gridengine`, `pool:NAME`. */
  backend: string;
  job: JobRow;
  /** The launch row (submit mode). */
  launch?: LaunchRow;
  /** The launch's folder (in dry-run mode, a placeholder path: the launch gets its number when made). */
  dir: string;
  /** Its tasks as a condensed tasklist, and how many. */
  tasklist: string;
  count: number;
  /** The tasks in id order with their next attempt number (read when needed: a pool reads them lazily). */
  tasks: () => LaunchTask[];
  /**
   * The same tasks one at a time, for a backend that streams them into its runner's files (local): a million
   * tasks without a million objects. The ledger runs nothing else until the iteration ends.
   */
  eachTask: () => Iterable<LaunchTask>;
  /** What every runner of the launch shares. */
  settings: RunSettings;
  request: LaunchRequest;
  /** The backend's section of the config (header, footer, partition, ...). */
  config: Record<string, string>;
  /** Path of the drover entry script and of the node binary, to start runners. */
  drover: { bin: string; node: string };
  /** Local: run in the background and return at once. */
  detach: boolean;
  /** Pools: the ranks of `--num-jobs` (each task gets DROVER_JOB_RANK and DROVER_NUM_JOBS). */
  numJobs?: number;
  /**
   * Local, foreground: makes who watches the tasks as they run here (called only by a backend that runs them in
   * this process, so a cluster submission draws no progress).
   */
  observe?: (count: number, job: string) => RunObserver;
  /**
   * Record the launch's handles now, before its submission returns (submit mode): a detached runner is known to
   * the ledger before it is told to start. src/launch writes them; a backend only says what they are.
   */
  recordHandles?: (handles: object) => void;
}

/** What a backend did with a launch (or, in dry-run mode, would do). */
export interface LaunchOutcome {
  /** Backend handles, stored with the launch (runner pid, array job ids, ...); none in dry-run mode. */
  handles?: object;
  /** One line for people: what was submitted or would be. */
  summary: string;
  /** The scheduler commands that would be submitted (dry-run), as argv with the program first. */
  commands?: string[][];
  warnings: string[];
  /** Local, foreground: the launch ran here to its end; the signal that stopped it early, if one did. */
  ran?: { interrupted: NodeJS.Signals | null };
}

/** The launch options beyond the common ones (src/launch/spec.ts); a backend takes those it lists. */
export type BackendOption =
  | 'maxTasks'
  | 'duration'
  | 'tasksPerNode'
  | 'maxTasksPerNode'
  | 'partition'
  | 'account'
  | 'qos'
  | 'after'
  | 'extraArgs'
  | 'detach'
  | 'numJobs';

/** What a backend takes of a launch request, and how it keeps a launch's task rows. */
export interface BackendTraits {
  options: ReadonlySet<BackendOption>;
  /** Why the others are refused, for the one line the user gets ("the pool decides"). */
  refusal: string;
  /**
   * `lazy`: the launch's task rows are made in chunks as they are dispatched (a pool), so launching N tasks is
   * one transaction whose size does not depend on N; `eager`: all at once, when the launch is made.
   */
  taskRows: 'eager' | 'lazy';
  /** How its runners can keep tasks' output (`--logs`), the default first. */
  logs: readonly LogsMode[];
}

/**
 * What every backend does: launch (or preview) a launch, fill in what runners could not record, cancel. One
 * contract for local, slurm, gridengine and pools; src/launch/ drives `launch`, the CLI never branches on a
 * backend's name.
 */
export interface Backend {
  /** `local`, `slurm`, `gridengine`, `pool` — the `backend` column of its launches (`pool:NAME` for pools). */
  readonly name: string;
  readonly traits: BackendTraits;
  /** Check what only this backend knows is wrong with a request (before anything is written); usage errors. */
  check?(request: LaunchRequest, detach: boolean): void;
  /**
   * Write the rows this backend keeps beside a new launch, inside the launch's own transaction (the pool's queue
   * row). Synchronous: it is part of one ledger transaction.
   */
  record?(plan: LaunchPlan & { launch: LaunchRow }): void;
  /**
   * The handles a new launch has from the moment it is made, recorded in its transaction by src/launch (the local
   * backend: this process, its runner until it hands the tasks to another): a launch is never without a runner
   * to check.
   */
  initialHandles?(): object;
  /**
   * Submit the launch (`submit`: the plan has its launch row; bad requests throw usage errors before anything
   * reaches the scheduler, and a refused submission throws after withdrawing what it submitted) or say what
   * submitting would do (`dry-run`: nothing is written or run).
   */
  launch(plan: LaunchPlan, mode: LaunchMode): Promise<LaunchOutcome>;
  /**
   * Fill in what runners could not record for these open launches of this backend (after their records were
   * ingested): tasks whose runner or scheduler entry is gone without a final record become `lost`, scheduler
   * facts such as pending or timeout are applied. A refresh hands each backend all its open launches at once,
   * so a scheduler is asked once for all of them (one squeue, one qstat), not once per launch. Called inside a
   * write transaction. Returns the launches that must stay open though none of their tasks is queued or running:
   * those with a task whose end can still change (a scheduler's stop ended it while the scheduler still holds its
   * element, which may run again).
   */
  reconcile(ledger: Ledger, launches: readonly LaunchRow[]): ReadonlySet<number>;
  /** Ask the backend to stop these tasks of a launch (or all); the ledger records `cancelled` as they stop. */
  cancel(ledger: Ledger, launch: LaunchRow, tasks: readonly number[] | 'all'): void;
}

/** What `reconcile` returns for launches none of which must stay open. */
export const NONE_KEPT_OPEN: ReadonlySet<number> = new Set();

const RAN_IN_PART = Symbol('the launch ran in part');

/**
 * Mark an error a backend throws after some of the launch's tasks ran here (a foreground runner that failed
 * mid-way): the launch happened, and src/launch keeps it. Any other error of a backend's `launch` means it left
 * nothing running (a refused submission withdraws what was accepted), and src/launch takes the launch back.
 */
export function ranInPart<E>(err: E): E {
  if (typeof err === 'object' && err !== null) Object.assign(err, { [RAN_IN_PART]: true });
  return err;
}

/** True for an error marked by ranInPart. */
export function isRanInPart(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as Record<symbol, unknown>)[RAN_IN_PART] === true;
}
