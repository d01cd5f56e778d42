/**
 * The controller's HTTP API: the only module the controller (src/controller) and the worker (src/worker)
 * share, and what the CLI's client speaks. Every route is under `/v<API_VERSION>/`, takes and returns JSON and
 * needs `Authorization: Bearer <token>`: user tokens for user routes, worker tokens for worker routes.
 * Errors are `{ "error": { "code", "message" } }` with a 4xx/5xx status. A change that breaks a message bumps
 * API_VERSION; adding an optional field does not.
 */
import type { AttemptRecord } from '../runner/records.js';

/** Version of this API: the path prefix `/v1`. */
export const API_VERSION = 1;
/** Path prefix of every route. */
export const API_PREFIX = `/v${API_VERSION}`;

/** The resources of a worker, or what one task needs. */
export interface Resources {
  /** CPUs. */
  cpus: number;
  /** GPUs. */
  gpus: number;
  /** Memory in MiB; 0 means not tracked. */
  mem_mb: number;
}

/** Error body of every non-2xx answer. */
export interface ErrorBody {
  error: {
    /** `unauthorized` (401), `forbidden` (403), `not-found`, `conflict`, `bad-request`, `too-large`, `internal`. */
    code: string;
    /** One line for people: what was wrong and what to do. */
    message: string;
  };
}

// ---------------------------------------------------------------------------------------------------------
// User routes
// ---------------------------------------------------------------------------------------------------------

/** `POST /v1/pools`: create a pool and start its workers. Answer: 201 `PoolStatus`. */
export interface CreatePoolRequest {
  name: string;
  backend: 'local' | 'slurm' | 'gridengine';
  workers: number;
  /** Per worker. */
  cpus: number;
  gpus?: number;
  /** Per worker, e.g. `4G`. */
  mem?: string;
  /** Seconds each worker may live (scheduler time limit). */
  duration?: number;
  /** Tasks at once per worker (default: its cpus). */
  slots?: number;
  /** Run once by each worker before it takes tasks (`/bin/sh -c`). */
  setup?: string;
  /** Scheduler options: partition, account, qos, queue. */
  options?: Record<string, string>;
}

/** `POST /v1/pools/:name/scale`: change the number of workers. Answer: `PoolStatus`. */
export interface ScalePoolRequest {
  workers: number;
}

/** One worker as `GET /v1/pools/:name` shows it. */
export interface WorkerStatus {
  id: string;
  host: string;
  pid: number;
  /** `setup` (running its setup command), `ready`, `draining` (finishing, then stopping), `lost`, `stopped`. */
  state: string;
  slots: number;
  free_slots: number;
  /** Tasks handed to it and not ended: `launch:task`. */
  tasks: string[];
  /** Seconds since its last request. */
  seen_ago: number;
}

/** `GET /v1/pools/:name` (and the answer of create, scale and delete). */
export interface PoolStatus {
  name: string;
  backend: string;
  state: 'up' | 'down';
  workers_wanted: number;
  per_worker: Resources & { slots: number; duration: number | null };
  setup: string | null;
  workers: WorkerStatus[];
  /** Tasks of open launches on this pool not handed to a worker yet. */
  queued: number;
  running: number;
  /** What started the workers: pids, array job ids. */
  handles: unknown[];
}

/**
 * `POST /v1/launches`: launch a job's tasks, or one command N times, onto a pool — one request and one
 * transaction whatever the number of tasks. Answer: 201 `LaunchCreated`, before anything runs.
 */
export interface CreateLaunchRequest {
  pool: string;
  /** The job (made by prelaunch); with `command`, the name of the new job (default: generated). */
  jobname?: string;
  /** Read the job's tasks from this jobfile (the server reads it: it runs on the submit host). */
  jobfile?: string;
  /** Only these tasks (tasklist grammar). */
  tasklist?: string;
  failed?: boolean;
  unfinished?: boolean;
  /** Run this command `num_jobs` times (default 1) with DROVER_JOB_RANK and DROVER_NUM_JOBS. */
  command?: string;
  num_jobs?: number;
  /** Per task. */
  cpus?: number;
  gpus?: number;
  mem?: string;
  retries?: number;
  /** Seconds before the first retry (doubling, max 60 s, ±20%). */
  retry_delay?: number;
  /** Per-attempt time limit in seconds. */
  task_timeout?: number;
  kill_grace?: number;
  /** Working directory of the tasks (absolute). */
  cwd: string;
  /** Extra environment of every task. */
  env?: Record<string, string>;
  /** The command line, for `drover history`. */
  argv?: string[];
}

/** Answer of `POST /v1/launches`. */
export interface LaunchCreated {
  launch: string;
  jobname: string;
  pool: string;
  tasks: number;
  tasklist: string;
}

/**
 * `GET /v1/launches/:id?since=V&wait=S`: a launch's progress. With `since`, the answer waits (up to `wait`
 * seconds) until the launch changed after version V: `--follow` uses it instead of polling.
 */
export interface LaunchProgress {
  launch: string;
  jobname: string;
  pool: string;
  tasks: number;
  /** Every state key present, as in `drover status --json`. */
  counts: Record<string, number>;
  /** False once every task has ended. */
  open: boolean;
  /** Pass back as `since` to wait for the next change. */
  version: number;
}

/** `POST /v1/jobs/:name/cancel`: stop queued and running tasks of a job's pool launches. */
export interface CancelRequest {
  tasklist?: string;
}

/**
 * Other user routes (answers as the CLI's `--json`): `GET /v1/health`, `GET /v1/pools`,
 * `DELETE /v1/pools/:name?force=1` (409 while tasks run, unless force: then they are cancelled),
 * `GET /v1/jobs/:name/status` (= `drover status NAME --json`), `GET /v1/jobs/:name/tasks` (= `drover list
 * --jobname NAME --json`).
 */
export type UserRoutes = never;

// ---------------------------------------------------------------------------------------------------------
// Worker routes (worker tokens only)
// ---------------------------------------------------------------------------------------------------------

/**
 * `POST /v1/workers/register`: a worker says who it is and what it has; also sent again after the controller
 * was away, with what it is running and the records the controller has not acknowledged yet.
 */
export interface RegisterRequest {
  /** Chosen by the worker, unique, kept across reconnects. */
  id: string;
  pool: string;
  host: string;
  pid: number;
  resources: Resources;
  slots: number;
  /** Still running its setup command. */
  setup: boolean;
  /** Tasks it holds (running or about to): after a controller restart these stay its tasks. */
  holding: TaskKey[];
}

/** Answer of register. */
export interface RegisterAnswer {
  /** Send a heartbeat at least this often (seconds). */
  heartbeat: number;
  /** The report sequence number the controller applied last: resend the records after it. */
  seq: number;
}

/** A task of a launch. */
export interface TaskKey {
  launch: number;
  task: number;
}

/** `POST /v1/workers/:id/poll`: wait (up to `wait` seconds) for work. The answer comes as soon as there is some. */
export interface PollRequest {
  wait: number;
}

/** Answer of poll. */
export interface PollAnswer {
  tasks: TaskAssignment[];
  /** Stop these tasks (cancelled by the user). */
  cancel: TaskKey[];
  /** `drain`: take no more tasks, finish, exit. `stop`: stop everything now and exit. */
  stop?: 'drain' | 'stop';
}

/** A task handed to a worker: everything its runner needs. */
export interface TaskAssignment {
  launch: number;
  task: number;
  attempt: number;
  command: string;
  /** Extra environment of this task (DROVER_JOB_RANK, DROVER_NUM_JOBS for --num-jobs). */
  env?: Record<string, string>;
  /** The launch's settings, sent with its first task to a worker (and after a reconnect). */
  settings?: LaunchSettings;
}

/** What a worker's runner needs to run a launch's tasks. */
export interface LaunchSettings {
  job: string;
  launch: number;
  cwd: string;
  logDir: string;
  taskTimeout?: number;
  killGrace: number;
  header?: string;
  footer?: string;
  venv?: string;
  env?: Record<string, string>;
}

/** `POST /v1/workers/:id/report`: records of attempts, in order, numbered so a replay is applied once. */
export interface ReportRequest {
  batches: ReportBatch[];
}

/** Records of one launch with the worker's sequence number of the batch. */
export interface ReportBatch {
  seq: number;
  launch: number;
  records: AttemptRecord[];
}

/** Answer of report: every batch up to `seq` is applied. */
export interface ReportAnswer {
  seq: number;
}

/** `POST /v1/workers/:id/heartbeat`: I am alive. Answer: `{ stop?: 'drain' | 'stop' }`. */
export interface HeartbeatAnswer {
  stop?: 'drain' | 'stop';
}
