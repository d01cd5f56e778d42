import fs from 'node:fs';
import path from 'node:path';
import { inRunOrder, isGroupFile, runOfFile } from '../protocol/record-files.js';
import { type AttemptRecord, type EndRecord, parseRecords, type RunnerRecord } from '../protocol/records.js';
import { isProcessAlive, shortHostname } from '../util/proc.js';
import type { GroupFile, GroupTask } from './group.js';
import { preemptedReason, SCHEDULER_STOP } from './reasons.js';

/**
 * An array element the scheduler ran again (preemption, `scontrol requeue`, `qmod -rj`, a failed node) runs its
 * group anew: its runner reads what the element's earlier runs recorded (their record files beside its own) and
 * goes on from there, so no attempt runs twice under one number (invariant 2) and nothing is lost:
 *
 * | what the earlier runs left of a task        | this run                                                   |
 * | ------------------------------------------- | ---------------------------------------------------------- |
 * | nothing                                     | runs it as the group says                                  |
 * | an end that asked for a retry or a requeue  | runs that next attempt                                     |
 * | an attempt the stop ended (`killed`, TERM)  | says it was preempted (PreemptedRecord); with `--requeue`  |
 * |                                             | left, runs the next attempt, resumed (a requeue)           |
 * | an attempt with no end (the runner died)    | ends it `lost`, preempted; with a requeue left, as above   |
 * | any other end, or a skip                    | nothing: the task is done                                  |
 */

/** How a task's next attempt starts here: the numbers a runner's queue carries. */
export interface Carry {
  attempt: number;
  /** Retries made so far (the backoff's count). */
  retry: number;
  /** Requeues made so far (DROVER_RESUME=1 when any). */
  requeues: number;
}

/** Where a task's newest attempt got to in the earlier runs. */
type Last =
  | { kind: 'open'; attempt: number }
  | { kind: 'ended'; attempt: number; end: EndRecord; restated?: { requeue: boolean } }
  | { kind: 'skipped' };

/** What the earlier runs recorded of one task. */
export interface Seen {
  last: Last;
  retries: number;
  requeues: number;
}

/** What a runner does first when its element ran before. */
export interface Restart {
  /** This runner's run of its element (0: its first). */
  run: number;
  /** Records to write before any attempt starts. */
  records: AttemptRecord[];
  /** Per task the earlier runs recorded: how it goes on here, or null: it is done. Other tasks: as given. */
  next: Map<number, Carry | null>;
  /** The tasks that end here without running again, and how (the runner counts them). */
  ended: ('killed' | 'lost')[];
}

/**
 * An attempt the element's stop ended: its runner stopped it on the scheduler's SIGTERM, or it died of that
 * SIGTERM itself (Slurm signals every process of the element) before its runner could.
 */
function stoppedByScheduler(end: EndRecord): boolean {
  if (end.state !== 'killed') return false;
  return end.reason === SCHEDULER_STOP || (end.reason === undefined && end.signal === 'SIGTERM');
}

function lastAttempt(s: Seen | undefined): number {
  return s && s.last.kind !== 'skipped' ? s.last.attempt : 0;
}

/**
 * Fold the earlier runs' records, in the order they were written, into what each task got to; `ids`: only these
 * tasks (the group's).
 */
export function seenTasks(records: Iterable<AttemptRecord>, ids?: ReadonlySet<number>): Map<number, Seen> {
  const seen = new Map<number, Seen>();
  const of = (task: number): Seen => {
    let s = seen.get(task);
    if (!s) {
      s = { last: { kind: 'skipped' }, retries: 0, requeues: 0 };
      seen.set(task, s);
    }
    return s;
  };
  for (const r of records) {
    if ('task' in r && ids && !ids.has(r.task)) continue;
    switch (r.type) {
      case 'start': {
        const had = seen.get(r.task);
        if (r.attempt >= lastAttempt(had)) of(r.task).last = { kind: 'open', attempt: r.attempt };
        break;
      }
      case 'end': {
        const s = of(r.task);
        if (r.retry) s.retries++;
        if (r.requeue) s.requeues++;
        if (r.attempt >= lastAttempt(s)) s.last = { kind: 'ended', attempt: r.attempt, end: r };
        break;
      }
      case 'preempted': {
        const s = seen.get(r.task);
        if (s?.last.kind !== 'ended' || s.last.attempt !== r.attempt) break;
        s.last.restated = { requeue: r.requeue };
        if (r.requeue) s.requeues++;
        break;
      }
      case 'skip':
        of(r.task).last = { kind: 'skipped' };
        break;
      case 'skip-many':
        for (const [first, last] of r.ranges) {
          if (ids) {
            for (const t of ids) if (t >= first && t <= last) of(t).last = { kind: 'skipped' };
          } else for (let t = first; t <= last; t++) of(t).last = { kind: 'skipped' };
        }
        break;
    }
  }
  return seen;
}

/**
 * The plan of a run after the first (the table above), for a launch's `--requeue` (0: none). Pure: records are
 * stamped `at`.
 */
export function planRestart(
  seen: ReadonlyMap<number, Seen>,
  requeue: number,
  at: number,
): Omit<Restart, 'run'> {
  const records: AttemptRecord[] = [];
  const next = new Map<number, Carry | null>();
  const ended: ('killed' | 'lost')[] = [];
  for (const [task, s] of seen) {
    const { last } = s;
    const after = (requeues: number): Carry | null =>
      last.kind === 'skipped' ? null : { attempt: last.attempt + 1, retry: s.retries, requeues };
    const left = s.requeues < requeue;
    if (last.kind === 'skipped') next.set(task, null);
    else if (last.kind === 'open') {
      records.push({
        type: 'end',
        task,
        attempt: last.attempt,
        at,
        state: 'lost',
        exit_code: null,
        signal: null,
        reason: preemptedReason(requeue, left),
        ...(left ? { requeue: true } : {}),
      });
      next.set(task, left ? after(s.requeues + 1) : null);
      if (!left) ended.push('lost');
    } else if (last.restated) next.set(task, last.restated.requeue ? after(s.requeues) : null);
    else if (last.end.retry || last.end.requeue) next.set(task, after(s.requeues));
    else if (stoppedByScheduler(last.end)) {
      const reason = preemptedReason(requeue, left);
      records.push({ type: 'preempted', task, attempt: last.attempt, at, reason, requeue: left });
      next.set(task, left ? after(s.requeues + 1) : null);
      if (!left) ended.push('killed');
    } else next.set(task, null);
  }
  return { records, next, ended };
}

/** The record files of the group's runners so far (the element's earlier runs), in run order. */
function groupFiles(group: GroupFile): string[] {
  try {
    return inRunOrder(fs.readdirSync(group.recordsDir).filter((n) => isGroupFile(n, group.group)));
  } catch {
    return [];
  }
}

/** The runner records of the element's earlier runs on this host whose runner still runs. */
function liveEarlierRunners(group: GroupFile, host: string): RunnerRecord[] {
  const live: RunnerRecord[] = [];
  for (const n of groupFiles(group)) {
    let first: string;
    try {
      first = fs.readFileSync(path.join(group.recordsDir, n), 'utf8').split('\n', 1)[0]!;
    } catch {
      continue;
    }
    const r = parseRecords(first).records[0];
    if (r?.type === 'runner' && r.host === host && isProcessAlive(r.pid, r.pid_start)) live.push(r);
  }
  return live;
}

/**
 * Wait until no earlier run of the element still runs its runner on this host: a scheduler may start the element
 * again while the runner of its stopped run, in a session of its own (Grid Engine), still stops its tasks and
 * records them. Those records say where each task got to; none of its attempts may be alive when the next
 * starts (invariant 2). False when one is still there after `patienceMs`: this run must not run anything.
 */
export async function earlierRunsGone(group: GroupFile, patienceMs = 600_000): Promise<boolean> {
  const host = shortHostname();
  const until = Date.now() + patienceMs;
  for (;;) {
    const live = liveEarlierRunners(group, host);
    if (live.length === 0) return true;
    if (Date.now() >= until) {
      process.stderr.write(
        `drover runner: the runner of an earlier run of this element (pid ${live[0]!.pid}) still runs after ${Math.round(patienceMs / 1000)} s: not running its tasks again\n`,
      );
      return false;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * What a cluster element's runner finds of the element's earlier runs in the records folder (nothing, on its
 * first run: run 0, no records). Only the group's own tasks count.
 */
export function readRestart(group: GroupFile, at: number): Restart {
  const names = groupFiles(group);
  if (names.length === 0) return { run: 0, records: [], next: new Map(), ended: [] };
  const run = 1 + runOfFile(names.at(-1)!);
  const records: AttemptRecord[] = [];
  for (const n of names) {
    let text: string;
    try {
      text = fs.readFileSync(path.join(group.recordsDir, n), 'utf8');
    } catch {
      continue;
    }
    for (const r of parseRecords(text).records) records.push(r);
  }
  const ids = new Set<number>();
  for (const t of group.tasks as Iterable<GroupTask>) ids.add(t.id);
  const seen = seenTasks(records, ids);
  return { run, ...planRestart(seen, group.requeue ?? 0, at) };
}

/**
 * Seconds before a cluster element's time limit at which its runner stops its tasks to run them again in the
 * element's next run (`--requeue`): their kill grace, and time for the last records and the request to the
 * scheduler before it stops the element itself.
 */
export function elementMargin(group: Pick<GroupFile, 'killGrace'>): number {
  return group.killGrace + 10;
}

/**
 * Whether a runner runs its element's tasks on in the element's next run when the element's time limit comes:
 * a cluster element's runner (not a pool worker's) of a `--requeue` launch with a time limit (`--duration`) at
 * least twice the margin, so that each run gets some work done.
 */
export function runsElementAgain(
  group: Pick<GroupFile, 'runnerLimit' | 'requeue' | 'termState' | 'killGrace'>,
  options: { keepOpen?: boolean },
): boolean {
  return (
    group.runnerLimit !== undefined &&
    group.runnerLimit >= 2 * elementMargin(group) &&
    (group.requeue ?? 0) > 0 &&
    group.termState === 'killed' &&
    options.keepOpen !== true
  );
}
