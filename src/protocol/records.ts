import { TERMINAL_STATES, type TerminalState } from './states.js';

/**
 * Attempt records: what a runner writes, one JSON object per line, to a file only it writes. The CLI ingests
 * them into the ledger (docs/concepts.md: compute nodes never write the database). Version 1.
 */
export const RECORDS_VERSION = 1;

/** First line of every record file: who writes it. */
export interface RunnerRecord {
  type: 'runner';
  v: number;
  /** Unique within the launch, e.g. `g1.vm.1234`. */
  runner: string;
  launch: number;
  job: string;
  host: string;
  pid: number;
  /** /proc start time of the runner process (clock ticks since boot), to tell a reused pid. */
  pid_start: string | null;
  slots: number;
  at: number;
}

/** A task's attempt started. */
export interface StartRecord {
  type: 'start';
  task: number;
  attempt: number;
  at: number;
  pid: number;
  slot: number;
  gpus: string | null;
  host: string;
  /** Its stdout and stderr: its own log files, or the segments of its slot (then with the offsets below). */
  out: string;
  err: string;
  /**
   * Output in segments (`--logs segments`): where this attempt's bytes begin in `out` and `err`, and its number
   * among the attempts of that segment (its entry in the segment's index, log-slices.ts). Absent: whole files.
   */
  out_off?: number;
  err_off?: number;
  seq?: number;
}

/** A task's attempt ended. */
export interface EndRecord {
  type: 'end';
  task: number;
  attempt: number;
  at: number;
  state: TerminalState;
  exit_code: number | null;
  signal: string | null;
  reason?: string;
  /** The runner will retry the task (another attempt follows): the task is queued again, not failed. */
  retry?: boolean;
  /**
   * `--requeue`: the task hit its time limit or asked (its exit code) to run again, and will, resumed: the task
   * is queued again, and the ledger counts a requeue (not a retry). Never with `retry`.
   */
  requeue?: boolean;
  /** Output in segments: where this attempt's bytes end in its start's `out` and `err` (exclusive). */
  out_end?: number;
  err_end?: number;
}

/** A task the runner was given but never started, because it was cancelled. */
export interface SkipRecord {
  type: 'skip';
  task: number;
  at: number;
  state: 'cancelled';
}

/**
 * Many tasks the runner was given and never started, all cancelled at once (the user stopped the whole launch):
 * the tasks of `ranges`, each `[first, last]` inclusive, in one record instead of a `skip` per task — a
 * cancelled million-task launch writes a few lines, not a million. Only runners write it (never pool workers).
 */
export interface SkipManyRecord {
  type: 'skip-many';
  ranges: [number, number][];
  at: number;
  state: 'cancelled';
}

/** The most ranges a runner puts in one skip-many record (a line of at most about 300 KB). */
export const SKIP_MANY_RANGES = 10_000;

/**
 * The scheduler stopped this attempt's array element and then ran the element again (preemption, `scontrol
 * requeue`, `qmod -rj`, a failed node): written by the element's next runner, which learns it from the records
 * of the runner before it. The attempt ended `killed` by that stop (SCHEDULER_STOP): it keeps its state and
 * takes `reason`; with `requeue`, it counts as requeued and its task runs again (`--requeue` had some left). An
 * attempt with no end at all gets a plain `end` record (`lost`) instead.
 */
export interface PreemptedRecord {
  type: 'preempted';
  task: number;
  attempt: number;
  at: number;
  reason: string;
  requeue: boolean;
}

/** The runner finished: every task it was given has an end or skip record above. */
export interface RunnerEndRecord {
  type: 'runner-end';
  at: number;
  reason: 'done' | 'cancelled';
}

export type AttemptRecord =
  | RunnerRecord
  | StartRecord
  | EndRecord
  | SkipRecord
  | SkipManyRecord
  | PreemptedRecord
  | RunnerEndRecord;

/** A line of a record file that is not a record: where it is (0-based, within the text parsed) and why. */
export interface RecordFault {
  /** Index of the line within the text given to parseRecords. */
  line: number;
  /** What is wrong with it. */
  reason: string;
  /** A whole record glued after the damaged part (a torn line the writer went on after): it counts. */
  recovered: boolean;
}

/**
 * Parse complete lines of records. A line that is not a record (torn by a crash or a full disk, or damaged)
 * is reported as a fault and skipped; the records around it count. A whole record written after a torn one
 * on the same line (the writer went on after a failed write) is recovered: a record line starts with
 * `{"type":"`, which no record holds anywhere else unescaped.
 */
export function parseRecords(text: string): { records: AttemptRecord[]; faults: RecordFault[] } {
  const records: AttemptRecord[] = [];
  const faults: RecordFault[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.trim() === '') continue;
    const got = parseLine(line);
    if (typeof got !== 'string') {
      records.push(got);
      continue;
    }
    const glued = line.lastIndexOf('{"type":"');
    const after = glued > 0 ? parseLine(line.slice(glued)) : undefined;
    if (after !== undefined && typeof after !== 'string') records.push(after);
    faults.push({ line: i, reason: got, recovered: after !== undefined && typeof after !== 'string' });
  }
  return { records, faults };
}

/** One line as a record, or why it is not one. */
function parseLine(line: string): AttemptRecord | string {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return 'not JSON (a torn or damaged line)';
  }
  return checkRecord(value) ?? (value as AttemptRecord);
}

const isInt = (v: unknown, min = 0) => Number.isSafeInteger(v) && (v as number) >= min;
const isTime = (v: unknown) => typeof v === 'number' && Number.isFinite(v);
const isStr = (v: unknown) => typeof v === 'string';
const isStrOrNull = (v: unknown) => v === null || typeof v === 'string';
const TERMINAL: ReadonlySet<unknown> = new Set(TERMINAL_STATES);

/** A non-empty list of at most SKIP_MANY_RANGES `[first, last]` task id ranges, 1 ≤ first ≤ last. */
function isRanges(v: unknown): boolean {
  if (!Array.isArray(v) || v.length === 0 || v.length > SKIP_MANY_RANGES) return false;
  return v.every(
    (p) => Array.isArray(p) && p.length === 2 && isInt(p[0], 1) && isInt(p[1], 1) && p[0] <= p[1],
  );
}

/** Fields that come all together or not at all, each a byte offset (or count) ≥ 0. */
function checkOptionalInts(
  r: Record<string, unknown>,
  fields: readonly string[],
  bad: (field: string) => string,
): string | undefined {
  const present = fields.filter((f) => r[f] !== undefined);
  if (present.length === 0) return undefined;
  for (const f of fields) if (!isInt(r[f])) return bad(f);
  return undefined;
}

/** Why a parsed JSON value is not a record of this version, or undefined when it is one. */
export function checkRecord(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'not a record object';
  const r = value as Record<string, unknown>;
  const bad = (field: string) =>
    `${r.type === 'end' ? 'an' : 'a'} '${String(r.type)}' record with a bad '${field}'`;
  switch (r.type) {
    case 'runner':
      if (!isInt(r.v, 1)) return bad('v');
      if (r.v !== RECORDS_VERSION)
        return `a record of version ${r.v}, newer than this drover (${RECORDS_VERSION})`;
      if (!isStr(r.runner)) return bad('runner');
      if (!isInt(r.launch, 1)) return bad('launch');
      if (!isStr(r.job)) return bad('job');
      if (!isStr(r.host)) return bad('host');
      if (!isInt(r.pid)) return bad('pid');
      if (!isStrOrNull(r.pid_start)) return bad('pid_start');
      if (!isInt(r.slots)) return bad('slots');
      return isTime(r.at) ? undefined : bad('at');
    case 'start':
      if (!isInt(r.task, 1)) return bad('task');
      if (!isInt(r.attempt, 1)) return bad('attempt');
      if (!isTime(r.at)) return bad('at');
      if (!isInt(r.pid)) return bad('pid');
      if (!Number.isSafeInteger(r.slot)) return bad('slot');
      if (!isStrOrNull(r.gpus)) return bad('gpus');
      if (!isStr(r.host)) return bad('host');
      if (!isStr(r.out)) return bad('out');
      if (!isStr(r.err)) return bad('err');
      return checkOptionalInts(r, ['out_off', 'err_off', 'seq'], bad);
    case 'end':
      if (!isInt(r.task, 1)) return bad('task');
      if (!isInt(r.attempt, 1)) return bad('attempt');
      if (!isTime(r.at)) return bad('at');
      if (!TERMINAL.has(r.state)) return bad('state');
      if (r.exit_code !== null && !Number.isSafeInteger(r.exit_code)) return bad('exit_code');
      if (!isStrOrNull(r.signal)) return bad('signal');
      if (r.reason !== undefined && !isStr(r.reason)) return bad('reason');
      if (r.retry !== undefined && typeof r.retry !== 'boolean') return bad('retry');
      if (r.requeue !== undefined && typeof r.requeue !== 'boolean') return bad('requeue');
      if (r.retry && r.requeue) return bad('requeue');
      return checkOptionalInts(r, ['out_end', 'err_end'], bad);
    case 'skip':
      if (!isInt(r.task, 1)) return bad('task');
      if (!isTime(r.at)) return bad('at');
      return r.state === 'cancelled' ? undefined : bad('state');
    case 'skip-many':
      if (!isRanges(r.ranges)) return bad('ranges');
      if (!isTime(r.at)) return bad('at');
      return r.state === 'cancelled' ? undefined : bad('state');
    case 'preempted':
      if (!isInt(r.task, 1)) return bad('task');
      if (!isInt(r.attempt, 1)) return bad('attempt');
      if (!isTime(r.at)) return bad('at');
      if (!isStr(r.reason)) return bad('reason');
      return typeof r.requeue === 'boolean' ? undefined : bad('requeue');
    case 'runner-end':
      if (!isTime(r.at)) return bad('at');
      return r.reason === 'done' || r.reason === 'cancelled' ? undefined : bad('reason');
    default:
      return `an unknown record type ${JSON.stringify(r.type)?.slice(0, 40)}`;
  }
}

/** Unix time in seconds with millisecond precision. */
export function nowSec(): number {
  return Date.now() / 1000;
}
