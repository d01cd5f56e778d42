import { droverJson, type RunOptions, watchStatus } from './drover.js';

/** The states of docs/concepts.md, in its order. */
export const ALL_STATES = [
  'pending',
  'queued',
  'running',
  'succeeded',
  'failed',
  'killed',
  'timeout',
  'cancelled',
  'lost',
  'error',
] as const;

export type StateName = (typeof ALL_STATES)[number];
export type Counts = Record<StateName, number>;

/** `drover status J --json` as the scripting contract defines it. */
export interface JobStatus {
  jobname: string;
  tasks: number;
  counts: Counts;
  /** Attempts `--requeue` ran again (issue 34), apart from the counts. */
  requeues: number;
  launches: {
    id: string;
    backend: string;
    tasklist: string;
    open: boolean;
    counts: Counts;
    requeues: number;
  }[];
}

/** One object of `drover list --jobname J --json`. */
export interface ListedTask {
  task: number;
  command: string;
  tag: string;
  state: StateName;
  exit_code: number | null;
  attempts: number;
  /** Of its attempts, the ones `--requeue` ran again. */
  requeues: number;
  /** The task's sweep values (issue 12): `{}` for a job prelaunch did not make. */
  params: Record<string, string>;
}

/** Counts with every state present: zero except those given. */
export function counts(some: Partial<Counts>): Counts {
  return Object.fromEntries(ALL_STATES.map((s) => [s, some[s] ?? 0])) as Counts;
}

/** `drover status JOB --json`. */
export function status(job: string, opts: RunOptions): Promise<JobStatus> {
  return droverJson<JobStatus>(['status', job, '--json'], opts);
}

/**
 * Wait until the job's status (as `drover status JOB --json`) is one `done` accepts, following it with one
 * `drover watch JOB --json`, and return it.
 */
export function statusWhen(
  job: string,
  opts: RunOptions,
  what: string,
  done: (s: JobStatus) => boolean,
  timeoutMs = 60_000,
): Promise<JobStatus> {
  return watchStatus<JobStatus>(job, opts, done, timeoutMs, (last) =>
    last ? `${what} (last seen: ${JSON.stringify(last.counts)})` : what,
  );
}

/** `drover list --jobname JOB --json`. */
export function list(job: string, opts: RunOptions): Promise<ListedTask[]> {
  return droverJson<ListedTask[]>(['list', '--jobname', job, '--json'], opts);
}
