/**
 * The controller's HTTP API: the only module the controller (src/controller) and the worker (src/worker)
 * share, and what the CLI's client speaks. Every route is under `/v<API_VERSION>/`, takes and returns JSON and
 * needs `Authorization: Bearer <token>`: user tokens for user routes, worker tokens for worker routes.
 * Errors are `{ "error": { "code", "message" } }` with a 4xx/5xx status. A change that breaks a message bumps
 * API_VERSION; adding an optional field does not.
 */
import type { WarnSignal } from '../util/warn-signal.js';
import type { AttemptRecord } from './records.js';

/** Version of this API: the path prefix `/v1`. */
export const API_VERSION = 1;
/** Path prefix of every route. */
export const API_PREFIX = `/v${API_VERSION}`;

/**
 * The header a worker sends with every request after it registered: the session secret the controller gave it.
 * Together with the worker token it proves the worker is the one the controller registered under that id.
 */
export const WORKER_SECRET_HEADER = 'drover-worker-secret';

/** Most bytes of one request body (a worker's report included): larger ones get 413. */
export const MAX_BODY_BYTES = 1 << 20;

/** Most records in one report (a worker splits what it has into reports of at most this many). */
export const MAX_REPORT_RECORDS = 5000;

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
    /**
     * `unauthorized` (401), `forbidden` (403), `not-yours` (403: records of attempts the worker does not hold),
     * `unknown-worker` (409: register again), `busy` (409: a report is already in flight), `not-found`,
     * `conflict`, `bad-request`, `too-large` (413), `starting` (503), `internal`.
     */
    code: string;
    /** One line for people: what was wrong and what to do. */
    message: string;
    /** With `not-yours`: the attempts whose records were refused (nothing of the report was applied). */
    refused?: AttemptKey[];
    /** With `gap` (409, a file chunk that begins past the controller's copy): the bytes it has; send from there. */
    offset?: number;
  };
}

/** An attempt of a task of a launch (`attempt` 0: a task that never started, as in a skip record). */
export interface AttemptKey {
  launch: number;
  task: number;
  attempt: number;
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
  /** Allocate workers by itself while tasks queue (`--auto`; Slurm and Grid Engine): `workers` is then 0. */
  auto?: AutoRequest;
}

/** `--auto`'s settings (docs/pools.md, "Automatic allocation"). */
export interface AutoRequest {
  /** Most workers at once, live and asked for (default 4). */
  max_workers?: number;
  /** Idle workers that stay (default 0). */
  min_workers?: number;
  /** Seconds a worker may idle before it leaves (default 300). */
  idle_timeout?: number;
  /** Most allocations waiting in the scheduler's queue (default 1). */
  backlog?: number;
}

/** One allocation (an array job of workers) that `--auto` submitted. */
export interface AllocationStatus {
  id: number;
  /** The scheduler's job id; null when the submission was refused. */
  job: string | null;
  workers: number;
  /** queued (no worker of it ready yet), running, finished, failed. */
  state: string;
  /** Unix seconds. */
  submitted_at: number;
  /** Why it failed, or was withdrawn. */
  reason: string | null;
}

/** A pool's automatic allocation, as `pool status` shows it. */
export interface AutoStatus {
  max_workers: number;
  min_workers: number;
  idle_timeout: number;
  backlog: number;
  /** `active`, or `paused` after allocations in a row failed to start (`drover pool resume`). */
  state: 'active' | 'paused';
  /** Why the controller did or did not submit, at its last look. */
  decision: string;
  /** Its allocations, newest first (at most 20). */
  allocations: AllocationStatus[];
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
  /** Why it is lost or stopped (`setup exited 3`, `drained`, ...); null while it is live. */
  reason: string | null;
}

/**
 * `GET /v1/pools/:name[?all=1]` (and the answer of create, scale and delete): the live workers (setup, ready,
 * draining); with `all`, the lost and stopped ones too.
 */
export interface PoolStatus {
  name: string;
  backend: string;
  state: 'up' | 'down';
  workers_wanted: number;
  per_worker: Resources & { slots: number; duration: number | null };
  setup: string | null;
  workers: WorkerStatus[];
  /** Workers that are lost or stopped (listed in `workers` only with `all`). */
  workers_gone: number;
  /** Why the most recently gone workers left, newest first, each reason once (at most 5). */
  gone_reasons: string[];
  /** Tasks of open launches on this pool not handed to a worker yet. */
  queued: number;
  running: number;
  /** What started the workers: pids, array job ids. */
  handles: unknown[];
  /** Automatic allocation (`--auto`), or null. */
  auto: AutoStatus | null;
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
  /** `--signal SIG@TIME` (e.g. `USR1@5m`): each task gets SIG, TIME before its time limit. */
  signal?: string;
  /** `--requeue N`, `--requeue-exit CODE`: see docs/long-tasks.md. */
  requeue?: number;
  requeue_exit?: number;
  /** Working directory of the tasks (absolute). */
  cwd: string;
  /** Extra environment of every task. */
  env?: Record<string, string>;
  /** The command line, for `drover history`. */
  argv?: string[];
  /** Say what the launch would queue, and record nothing but the history. */
  dry_run?: boolean;
  /** Where the attempts leave their results: `file` (DROVER_RESULT_FILE, the default) or `stdout`. */
  result?: 'file' | 'stdout';
  /** How the tasks' output is kept: `segments` (the default) or `files`. */
  logs?: 'files' | 'segments';
}

/** Answer of `POST /v1/launches`. */
export interface LaunchCreated {
  launch: string;
  jobname: string;
  pool: string;
  tasks: number;
  tasklist: string;
  /** Live workers of the pool now (setup, ready or draining): 0 means nothing will run until one registers. */
  workers: number;
  /** True when the pool starts its workers by itself as tasks queue (`--auto`). */
  auto?: boolean;
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
  /** Live workers of its pool now (0: nothing runs until one registers). */
  workers: number;
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
 * `POST /v1/workers/register`: a worker says what it has and gets an id from the controller, bound to a session
 * secret the worker chose (a worker of an earlier version chooses none and is given one). After the controller
 * (or the network) was away it registers again with that id and secret, what it is running and the records the
 * controller has not acknowledged yet; a restarted controller knows both from its database. An id without its
 * secret is refused (403), an id the controller does not know is 409 `unknown-worker` (register without one).
 * A first registration sent again, its answer lost, names the same secret: it gets the same id, not a second
 * worker that nobody runs.
 */
export interface RegisterRequest {
  /** The id the controller gave it, when it registers again. */
  id?: string;
  /**
   * Its session secret: the one it registered with, required with `id`; without `id`, the one it chose for its
   * first registration (at least MIN_WORKER_SECRET_CHARS random characters: newWorkerSecret).
   */
  secret?: string;
  pool: string;
  host: string;
  pid: number;
  resources: Resources;
  slots: number;
  /** Still running its setup command. */
  setup: boolean;
  /**
   * Tasks it holds (running or about to), each with the attempt it runs: after a controller restart these stay its
   * tasks. An entry without `attempt` (a worker of an earlier version) stands for whichever attempt it runs.
   */
  holding: (TaskKey & { attempt?: number })[];
  /** The scheduler array element it runs in (`A_I` for Slurm, `J.T` for Grid Engine), when it runs in one. */
  element?: string;
}

/** Answer of register. */
export interface RegisterAnswer {
  /** Its id: in the path of every other worker route. */
  id: string;
  /**
   * A session secret the controller chose, on a first registration that named none (a worker of an earlier
   * version): send it as the `drover-worker-secret` header.
   */
  secret?: string;
  /** Send a heartbeat at least this often (seconds). */
  heartbeat: number;
  /** The report sequence number the controller applied last: resend the records after it. */
  seq: number;
  /**
   * Attempts in its `holding` that are not its own here: taken back while it was taken for lost (recorded `lost`,
   * perhaps run again elsewhere), or never handed out by this controller. Stop their processes at once and drop
   * their records (the controller refuses them). Absent or empty: everything it holds is its own.
   */
  disowned?: AttemptKey[];
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
  /** How the tasks' output is kept (`files` when omitted: a launch recorded before there was a choice). */
  logs?: 'files' | 'segments';
  taskTimeout?: number;
  killGrace: number;
  /** `--signal`: the signal each task gets, seconds before its time limit. */
  warnSignal?: WarnSignal;
  /**
   * `--requeue`, for the controller: it decides requeues of the launch's tasks (a worker's runner never does,
   * as it never retries) and marks the attempts after one with DROVER_RESUME=1.
   */
  requeue?: number;
  requeueExit?: number;
  header?: string;
  footer?: string;
  venv?: string;
  env?: Record<string, string>;
}

/**
 * `POST /v1/workers/:id/report`: records of attempts, in order, numbered so a replay is applied once. Only
 * records of attempts the controller handed to this worker and that are still its own are taken; a report with
 * any other record is refused whole (403 `not-yours`, naming them) and changes nothing. One report at a time
 * per worker (409 `busy`), at most MAX_BODY_BYTES and MAX_REPORT_RECORDS. The log paths of an attempt are the
 * controller's (under the launch's log folder), whatever a record says.
 */
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

/**
 * `PUT /v1/workers/:id/files/:launch/:name?offset=N`, body the raw bytes (application/octet-stream, at most
 * FILE_CHUNK_BYTES): a worker without a shared filesystem (`drover worker --no-shared-fs`) sends its task logs and
 * result files, each a file of the launch's log folder named as on a shared filesystem: `<task>.<attempt>.out`,
 * `.err`, `.result.json` of an attempt it holds, or its own segments `<worker-id>.<slot>.out`, `.err`, `.idx`
 * while it holds a task of the launch. The bytes go at `offset`: those the controller already has change nothing,
 * and a chunk past its copy's end is refused (409 `gap`, with the `offset` to send from). Answer: FileAnswer.
 */
export interface FileAnswer {
  /** The controller has the file's bytes up to here. */
  offset: number;
}

/** The most bytes of one file chunk (`PUT /v1/workers/:id/files/...`). */
export const FILE_CHUNK_BYTES = 256 << 10;

/** `POST /v1/workers/:id/heartbeat`: I am alive. Answer: `{ stop?: 'drain' | 'stop' }`. */
export interface HeartbeatAnswer {
  stop?: 'drain' | 'stop';
}
