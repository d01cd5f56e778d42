import type { LaunchRow, LaunchTask } from '../ledger/launches.js';
import type { Ledger } from '../ledger/ledger.js';
import type { DroverPaths } from '../paths.js';
import type { RunSettings } from '../runner/group.js';

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
}

/** Everything a backend needs to submit one launch. */
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

/** What a backend says about a submission, for the summary and --json. */
export interface SubmitResult {
  /** Backend handles, stored with the launch (array job ids, ...). */
  handles: object;
  /** One line for people: what was submitted. */
  summary: string;
  /** Warnings (e.g. a request the cluster can never satisfy). */
  warnings: string[];
}

/**
 * What every backend does for launches it ran. The local backend runs its launches itself (see
 * backends/local/submit.ts); cluster backends implement `submit`.
 */
export interface Backend {
  /** `local`, `slurm`, `gridengine`, ... — the `backend` column of its launches. */
  readonly name: string;
  /** Submit a launch to the scheduler (cluster backends). Bad requests throw usage errors before submitting. */
  submit?(req: SubmitRequest): Promise<SubmitResult>;
  /** The submissions `submit` would make (cluster backends), for `launch --dry-run`. Runs no submit command. */
  preview?(req: PreviewRequest): Preview;
  /**
   * Fill in what runners could not record (after their records were ingested): tasks whose runner or scheduler
   * entry is gone without a final record become `lost`, scheduler facts such as pending or timeout are applied.
   * Called inside a write transaction.
   */
  reconcile(ledger: Ledger, launch: LaunchRow): void;
  /** Ask the backend to stop these tasks of a launch (or all); the ledger records `cancelled` as they stop. */
  cancel(ledger: Ledger, launch: LaunchRow, tasks: readonly number[] | 'all'): void;
}
