/**
 * The dashboard's API (docs/dashboard.md#routes): the answers of the routes under `/v1/ui`, the one contract
 * between the controller's dashboard routes (src/controller/dashboard/) and the page (web/). The routes are typed
 * to return these, and the page reads them with `import type`: neither side retypes the other. Errors are
 * `ErrorBody` (messages.ts) with a 4xx/5xx status. Times are unix seconds, durations seconds.
 */
import type { PoolStatus, WorkerStatus } from './messages.js';
import type { State } from './states.js';

/** `GET me`: who serves this dashboard. */
export interface MeAnswer {
  /** drover's version. */
  drover: string;
  /** `drover ui`: pages only, no actions. */
  read_only: boolean;
  /** The `.drover` folder it reads. */
  folder: string;
}

/** `POST login` (`{"token"}`): a session; its cookie comes with the answer, its page key in it. */
export interface LoginAnswer {
  ok: true;
  /** Sent back with every request, as the `x-drover-page-key` header. */
  page_key: string;
}

/** `POST logout`. */
export interface LogoutAnswer {
  ok: true;
}

/** One job in the jobs page. */
export interface JobSummary {
  name: string;
  created_at: number;
  tasks: number;
  /** Tasks by their latest state, every state present. */
  counts: Record<State, number>;
  launches: number;
  /** Launches that may still change (their tasks queued or running). */
  open_launches: number;
  /** The latest thing that happened: the newest launch, first start or last end. */
  last_activity: number;
}

/** `GET jobs`: every job, newest first. */
export interface JobsAnswer {
  jobs: JobSummary[];
}

/** One launch of a job, as its page lists it. */
export interface LaunchSummary {
  id: number;
  /** `local`, `slurm`, `gridengine` or `pool:NAME`. */
  backend: string;
  tasklist: string;
  tasks: number;
  created_at: number;
  /** Its tasks may still change (some queued or running). */
  open: boolean;
  counts: Record<State, number>;
  /** Its first attempt's start, its last attempt's end; null before there is one. */
  first_start: number | null;
  last_end: number | null;
}

/** Attempts over time: how many ran at each moment, and how many had ended in each state by then. */
export interface Timeline {
  /** Bucket end times. */
  t: number[];
  running: number[];
  /** Cumulative ends per terminal state, one value per bucket. */
  ended: Record<string, number[]>;
}

/** A job's ended attempts' durations in equal bins from the least to the most. */
export interface Histogram {
  min: number;
  max: number;
  /** Each bin's width (1 when every duration is the same). */
  width: number;
  counts: number[];
}

/** `GET jobs/J`: a job, its launches and its charts. */
export interface JobAnswer {
  name: string;
  tasks: number;
  created_at: number;
  counts: Record<State, number>;
  /** The names of its tasks' params (the task table's columns). */
  params: string[];
  launches: LaunchSummary[];
  /** Null before an attempt has started. */
  timeline: Timeline | null;
  /** Null before an attempt has ended. */
  histogram: Histogram | null;
}

/** One task with its latest attempt's facts. */
export interface TaskRow {
  id: number;
  state: State;
  exit_code: number | null;
  /** The signal that ended it, e.g. `SIGKILL`. */
  signal: string | null;
  attempts: number;
  tag: string;
  command: string;
  params: Record<string, string>;
  started_at: number | null;
  ended_at: number | null;
  duration_s: number | null;
  host: string | null;
}

/** A row of the task table: the task and its result, flattened (`a.b` keys), when it left one. */
export interface TaskPageRow extends TaskRow {
  result: Record<string, unknown> | null;
}

/** `GET jobs/J/tasks?offset&limit&sort&dir&state&q`: one page of the task table. */
export interface TaskPageAnswer {
  /** Tasks the filter matches, on every page. */
  total: number;
  rows: TaskPageRow[];
}

/** One attempt of a task, as the task page shows it. */
export interface AttemptRow {
  attempt: number;
  launch_id: number;
  backend: string;
  state: State;
  exit_code: number | null;
  signal: string | null;
  started_at: number | null;
  ended_at: number | null;
  duration_s: number | null;
  host: string | null;
  pid: number | null;
  /** Why it ended so, when known (a lost attempt: what said it is lost). */
  reason: string | null;
  /** True when it ran the task's current command (an earlier command's attempts are history). */
  current: boolean;
  /** Where its output is: a file of its own, or a slice (offsets) of a segment file. */
  stdout_path: string | null;
  stderr_path: string | null;
  stdout_off: number | null;
  stdout_end: number | null;
  stderr_off: number | null;
  stderr_end: number | null;
  log_seq: number | null;
}

/** The end of an attempt's output as the task page shows it. */
export interface LogTail {
  path: string | null;
  /** Bytes of it now; null when its file is not there (never written, removed, or on a node's own disk). */
  size: number | null;
  /** Its last 16 KiB at most, as text (a character cut at the start shows as U+FFFD). */
  text: string;
  /** True when it holds more than the text shows. */
  cut: boolean;
}

/** `GET jobs/J/tasks/T?attempt=N`: a task, its attempts, and the logs of one (the latest, or N). */
export interface TaskAnswer {
  task: TaskRow;
  /** Newest first. */
  attempts: AttemptRow[];
  /** The attempt whose logs these are; null before the first. */
  attempt: number | null;
  stdout: LogTail;
  stderr: LogTail;
  /** Its result as the task wrote it (not flattened). */
  result: Record<string, unknown> | null;
}

/** One value of the chart's param: the result field over the succeeded tasks with that value. */
export interface ChartPoint {
  value: string;
  n: number;
  mean: number;
  min: number;
  max: number;
}

/** `GET jobs/J/chart?field=F&param=P`: a numeric result field against a param. */
export interface ChartAnswer {
  field: string;
  param: string;
  /** Every value is a number: points are in numeric order (else in text order). */
  numeric: boolean;
  points: ChartPoint[];
}

/** A worker as the pools page shows it: `free_slots` is null when only the ledger knows it (`drover ui`). */
export interface PoolWorker extends Omit<WorkerStatus, 'free_slots'> {
  free_slots: number | null;
}

/** A pool the controller runs: its status (as `GET /v1/pools/:name?all=1`), live. */
export interface LivePool extends PoolStatus {
  live: true;
}

/** A pool as the ledger last knew it: no controller (`drover ui`), or the pool is down. */
export interface LedgerPool {
  name: string;
  backend: string;
  state: string;
  workers_wanted: number;
  live: false;
  workers: PoolWorker[];
  workers_gone: number;
  gone_reasons: string[];
  queued: null;
  running: null;
}

/** `GET pools`: every pool. */
export interface PoolsAnswer {
  /** A controller runs here (`drover server`), not `drover ui`. */
  controller: boolean;
  pools: (LivePool | LedgerPool)[];
}

/** `POST jobs/J/cancel` (`{"tasklist"?}`): the tasks it cancelled. */
export interface CancelAnswer {
  jobname: string;
  cancelled: number[];
}

/**
 * `POST jobs/J/rerun-failed`: what `drover launch J --failed --json` printed (it runs as its own process); the
 * launch is null when nothing was left to launch.
 */
export interface RerunFailedAnswer {
  jobname: string;
  launch: string | null;
  tasks: number;
  tasklist?: string;
  [more: string]: unknown;
}

/**
 * `GET events?job=J`: a server-sent-events stream whose events carry no data (`{}`). `ready`: the stream is live
 * (the page draws); `change`: what the page shows changed (it fetches it again).
 */
export type LiveEvent = 'ready' | 'change';
