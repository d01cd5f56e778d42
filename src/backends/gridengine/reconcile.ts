import fs from 'node:fs';
import path from 'node:path';
import { ingestLaunch } from '../../ledger/ingest.js';
import { launchTaskStates } from '../../ledger/launch-tasks.js';
import { type LaunchRow, setLaunchSightings } from '../../ledger/launches.js';
import type { Ledger } from '../../ledger/ledger.js';
import { killedWithReason } from '../../ledger/reconcile-reads.js';
import { awaitRerun, markUnfinished, recordError, restateEnd } from '../../ledger/transitions.js';
import type { State } from '../../protocol/states.js';
import { PREEMPTED } from '../../runner/reasons.js';
import { unreadableWarning } from '../cluster/answer.js';
import { cancelRequests } from '../cluster/cancels.js';
import { startedGroups } from '../cluster/runners.js';
import {
  type EqwSeen,
  eqwReasons,
  type GoneFacts,
  goneTaskVerdict,
  SCHEDULER_STOP,
  stoppedTaskVerdict,
  type Verdict,
} from './classify.js';
import { qacct, qstatJob } from './commands.js';
import {
  type Element,
  elementDir,
  elementName,
  type GridEngineHandles,
  launchElements,
  readHandles,
  readSightings,
} from './handles.js';
import { type AcctRecord, isErrorState, parseErrorReasons, parseQacct, type QueueSnapshot } from './parse.js';
import { queueSnapshot } from './queue.js';

type OpenWork = ReturnType<typeof openWork>;

/** What is still open in a launch: tasks queued or running, and tasks killed by a scheduler stop (task → attempt). */
function openWork(ledger: Ledger, launchId: number) {
  const rows = launchTaskStates(ledger, launchId);
  const open = new Map(
    rows.filter((r) => r.state === 'queued' || r.state === 'running').map((r) => [r.task_id, r.state]),
  );
  const stopped = killedWithReason(ledger, launchId, SCHEDULER_STOP);
  return { ids: rows.map((r) => r.task_id), open, stopped };
}

/**
 * Element error reasons of a job from `qstat -j`, or undefined when it cannot be asked or its answer cannot be
 * read whole (then `warn` is told).
 */
function errorReasons(job: string, warn: (message: string) => void): Map<number, string> | undefined {
  const text = qstatJob(job);
  if (text === undefined) return undefined;
  const parsed = parseErrorReasons(text);
  if (parsed.ok) return parsed.value;
  warn(
    unreadableWarning('qstat -j', parsed.why, 'drover records elements in Eqw once it can read their reason'),
  );
  return undefined;
}

/**
 * Tasks of `Eqw` elements become `error`, with Grid Engine's reason from `qstat -j`. An element stays in Eqw until
 * it is deleted, so drover can wait for the reason rather than record one it did not read: when its job's
 * `qstat -j` gives no whole answer, and for up to EQW_REASON_GRACE_S while a whole answer has no reason for it
 * (Grid Engine can show the job in Eqw a moment before every element's reason is there); after that, a general one
 * (eqwReasons). Called every round the queue was read, also with no element in Eqw, so sightings of elements no
 * longer there are dropped.
 */
function recordErrorElements(
  ledger: Ledger,
  launch: LaunchRow,
  elements: Element[],
  open: Map<number, State>,
): void {
  const answers = new Map<string, Map<number, string> | undefined>();
  const seen: EqwSeen[] = [];
  for (const e of elements) {
    if (!answers.has(e.job))
      answers.set(
        e.job,
        errorReasons(e.job, (m) => ledger.warnOnce(m)),
      );
    const known = answers.get(e.job);
    seen.push({
      name: elementName(e.job, e.index),
      answered: known !== undefined,
      reason: known?.get(e.index),
    });
  }
  const { reasons, sightings } = eqwReasons(readSightings(launch).eqw, seen, Date.now() / 1000);
  for (const e of elements) {
    const why = reasons.get(elementName(e.job, e.index));
    if (why === undefined) continue;
    const reason = `Grid Engine could not start it (Eqw): ${why}`;
    const running: number[] = [];
    for (const t of e.tasks) {
      if (open.get(t) === 'queued') recordError(ledger, launch.job_id, launch.id, t, reason);
      else if (open.get(t) === 'running') running.push(t);
    }
    if (running.length > 0) markUnfinished(ledger, launch.job_id, launch.id, running, 'lost', reason);
  }
  if (JSON.stringify(sightings) !== JSON.stringify(readSightings(launch).eqw ?? {}))
    setLaunchSightings(ledger, launch.id, { eqw: sightings });
}

/**
 * Accounting records of the gone elements that need one, one qacct call per array job. An answer that cannot be
 * read whole counts as none (as when qacct has no record yet), and `warn` is told.
 */
function accounting(elements: Element[], warn: (message: string) => void): Map<string, AcctRecord> {
  const byJob = new Map<string, number[]>();
  for (const e of elements) {
    const list = byJob.get(e.job);
    if (list) list.push(e.index);
    else byJob.set(e.job, [e.index]);
  }
  const out = new Map<string, AcctRecord>();
  for (const [job, indices] of byJob) {
    const sorted = indices.sort((a, b) => a - b);
    const text = qacct(
      job,
      sorted.length === 1 ? String(sorted[0]) : `${sorted[0]}-${sorted[sorted.length - 1]}`,
    );
    if (text === undefined) continue;
    const parsed = parseQacct(text);
    if (parsed.ok) for (const [k, v] of parsed.value) out.set(k, v);
    else
      warn(
        unreadableWarning(
          'qacct',
          parsed.why,
          'drover waits for a whole record before it judges those elements',
        ),
      );
  }
  return out;
}

/** Seconds since its script started at which Grid Engine stopped an element (its stop file), if it did. */
function stoppedAfter(launch: LaunchRow, e: Element): number | undefined {
  try {
    const text = fs.readFileSync(path.join(elementDir(launch.dir), `${e.job}.${e.index}.stop`), 'utf8');
    const n = Number.parseInt(text, 10);
    return Number.isFinite(n) ? n : undefined;
  } catch {
    return undefined;
  }
}

/** The launch's time limit per element, when it had one. */
function durationOf(launch: LaunchRow): number | undefined {
  return (JSON.parse(launch.options) as { duration?: number }).duration;
}

/**
 * Tasks a scheduler stop killed: `queued` (preempted) while their element pends to run again (`qmod -rj`, a
 * reschedule: its next runner says how they go on), else `cancelled` if the user cancelled them, `timeout` at
 * h_rt, else `killed`.
 */
function settleStopped(
  ledger: Ledger,
  launch: LaunchRow,
  h: GridEngineHandles,
  work: OpenWork,
  queue: QueueSnapshot,
): void {
  const cancels = cancelRequests(launch.dir);
  const duration = durationOf(launch);
  for (const e of launchElements(h, work.ids)) {
    if (!e.tasks.some((t) => work.stopped.has(t))) continue;
    const after = stoppedAfter(launch, e);
    const state = queue.get(e.job)?.get(e.index);
    // An element that ran and is queued again (`Rq`), or rescheduled while its stopped run still ends (`Rr`):
    // Grid Engine runs it again. Not one being deleted (`dr`) or in error.
    const pendsAgain = state !== undefined && /[qR]/.test(state) && !/[dE]/.test(state);
    for (const t of e.tasks) {
      const attempt = work.stopped.get(t);
      if (attempt === undefined) continue;
      if (pendsAgain) {
        awaitRerun(ledger, launch.job_id, launch.id, t, attempt, PREEMPTED);
        continue;
      }
      const v = stoppedTaskVerdict(cancels === 'all' || cancels.has(t), after, duration);
      restateEnd(ledger, launch.job_id, launch.id, t, attempt, 'killed', v.state, v.reason);
    }
  }
}

/** Settle the open tasks of elements that left qstat without final records from their runners. */
function settleGone(ledger: Ledger, launch: LaunchRow, gone: Element[], work: OpenWork): void {
  const cancels = cancelRequests(launch.dir);
  const cancelled = (t: number) => cancels === 'all' || cancels.has(t);
  const undecided = gone.filter((e) => e.tasks.some((t) => work.open.has(t) && !cancelled(t)));
  const warn = (message: string) => ledger.warnOnce(message);
  const acct = undecided.length > 0 ? accounting(undecided, warn) : new Map<string, AcctRecord>();
  const duration = durationOf(launch);
  const now = Date.now() / 1000;
  const before = readSightings(launch).gone ?? {};
  const seen = { ...before };
  const runners = startedGroups(ledger, launch.id);
  const verdicts = new Map<string, { v: Verdict; tasks: number[] }>();
  for (const e of gone) {
    const name = elementName(e.job, e.index);
    const facts: GoneFacts = {
      acct: acct.get(name),
      goneFor: now - (seen[name] ?? now),
      duration,
      runnerStarted: runners.has(e.key),
      elementRan: fs.existsSync(path.join(elementDir(launch.dir), `${name}.out`)),
    };
    let pending = false;
    for (const t of e.tasks) {
      if (!work.open.has(t)) continue;
      const v = goneTaskVerdict(cancelled(t), work.open.get(t) === 'running', facts);
      if (!v) pending = true;
      else if (v.state === 'error') recordError(ledger, launch.job_id, launch.id, t, v.reason);
      else {
        const key = `${v.state}\n${v.reason}`;
        const same = verdicts.get(key);
        if (same) same.tasks.push(t);
        else verdicts.set(key, { v, tasks: [t] });
      }
    }
    if (pending) seen[name] ??= now;
    else delete seen[name];
  }
  for (const { v, tasks } of verdicts.values())
    markUnfinished(ledger, launch.job_id, launch.id, tasks, v.state, v.reason);
  if (JSON.stringify(seen) !== JSON.stringify(before)) setLaunchSightings(ledger, launch.id, { gone: seen });
}

/**
 * Reconcile Grid Engine launches (inside a write transaction, after their records were ingested), with one
 * `qstat -xml` for all of them. Tasks a scheduler stop killed → `cancelled` (drover cancel asked), `timeout`
 * (stopped at h_rt) or `killed`. Elements in `Eqw` → `error` with Grid Engine's reason (qstat -j). Elements
 * gone from qstat without final records → from qacct: `timeout` (h_rt), `killed` (signal), `error` (never
 * started, or ended before drover's runner started), `cancelled` (drover cancel asked), else `lost`. qstat -j
 * only for jobs with elements in Eqw, qacct only for elements that left without final records. Returns the
 * launches with stopped tasks qstat could not be asked about: they stay open.
 */
export function reconcileGridEngine(ledger: Ledger, launches: readonly LaunchRow[]): ReadonlySet<number> {
  // Asked when the first launch needs it, then the same answer for every launch of this refresh.
  let asked = false;
  let queue: QueueSnapshot | undefined;
  const snapshot = () => {
    if (!asked) queue = queueSnapshot((message) => ledger.warnOnce(message));
    asked = true;
    return queue;
  };
  const keepOpen = new Set<number>();
  for (const launch of launches)
    if (reconcileLaunch(ledger, launch, snapshot) === KEEP_OPEN) keepOpen.add(launch.id);
  return keepOpen;
}

/** What reconcileLaunch returns for a launch that must stay open: a stopped task it could not judge yet. */
const KEEP_OPEN = 'keep open';

function reconcileLaunch(
  ledger: Ledger,
  launch: LaunchRow,
  snapshot: () => QueueSnapshot | undefined,
): typeof KEEP_OPEN | undefined {
  const h = readHandles(launch);
  if (!h) return;
  let work = openWork(ledger, launch.id);
  if (work.stopped.size > 0) {
    const queue = snapshot();
    // Whether a stopped element runs again (qmod -rj, a reschedule) only qstat says: until it can, its tasks stay
    // as their runners left them, and their launch open (closed, it would miss the run again).
    if (!queue) return KEEP_OPEN;
    settleStopped(ledger, launch, h, work, queue);
    work = openWork(ledger, launch.id); // a task whose element pends again is queued now
  }
  if (work.open.size === 0) return;
  const queue = snapshot();
  // Grid Engine cannot be asked from here, or its answer was not whole: leave the states as the runners left them.
  if (!queue) return;
  const openElements = (w: OpenWork) =>
    launchElements(h, w.ids).filter((e) => e.tasks.some((t) => w.open.has(t)));
  const errored: Element[] = [];
  let gone: Element[] = [];
  for (const e of openElements(work)) {
    const state = queue.get(e.job)?.get(e.index);
    if (state === undefined) gone.push(e);
    else if (isErrorState(state)) errored.push(e);
  }
  if (errored.length > 0 || Object.keys(readSightings(launch).eqw ?? {}).length > 0)
    recordErrorElements(ledger, launch, errored, work.open);
  if (gone.length === 0) return;
  // An element may have ended between the ingestion and qstat: read its last records before judging it.
  if (ingestLaunch(ledger, launch) > 0) {
    work = openWork(ledger, launch.id);
    if (work.stopped.size > 0) settleStopped(ledger, launch, h, work, queue);
    const still = new Set(openElements(work).map((e) => e.key));
    gone = gone.filter((e) => still.has(e.key));
    if (gone.length === 0) return;
  }
  settleGone(ledger, launch, gone, work);
}
