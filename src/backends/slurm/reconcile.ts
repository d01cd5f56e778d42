import fs from 'node:fs';
import { ingestLaunch } from '../../ledger/ingest.js';
import { launchUnfinished } from '../../ledger/launch-tasks.js';
import type { LaunchRow } from '../../ledger/launches.js';
import type { Ledger } from '../../ledger/ledger.js';
import { schedulerKilledAttempts } from '../../ledger/reconcile-reads.js';
import { awaitRerun, markUnfinished, recordError, restateEnd } from '../../ledger/transitions.js';
import type { TerminalState } from '../../protocol/states.js';
import { PREEMPTED, SCHEDULER_STOP } from '../../runner/reasons.js';
import { NONE_KEPT_OPEN } from '../backend.js';
import { cancelRequests } from '../cluster/cancels.js';
import { startedGroups } from '../cluster/runners.js';
import { type ElementEnd, elementEnds } from './accounting.js';
import {
  type Element,
  elementLookup,
  elementName,
  elementOutFile,
  type SlurmHandles,
  slurmHandles,
  taskKeys,
} from './handles.js';
import { liveElements } from './squeue.js';
import { type TaskFacts, verdict } from './verdict.js';

/** A task reconciliation may have to decide on, with its array element. */
interface Candidate {
  task: number;
  state: TaskFacts['state'];
  /** Of a `killed` task: its attempt, and the reason its runner gave (null: the task died of a signal). */
  attempt?: number;
  reason?: string | null;
  key: number;
  element: Element;
}

/**
 * Tasks still queued or running in the launch, and those ended `killed` by Slurm's signals: recorded so by a
 * runner that got SIGTERM, or dead of SIGTERM/SIGKILL before their runner noticed it was being stopped.
 */
function candidates(ledger: Ledger, launch: LaunchRow, h: SlurmHandles): Candidate[] {
  const rows = launchUnfinished(ledger, launch.id);
  const killed = schedulerKilledAttempts(ledger, launch.id, SCHEDULER_STOP);
  if (rows.length === 0 && killed.length === 0) return [];
  const keyOf = taskKeys(ledger, launch.id, h.tasks_per_node);
  const elementOf = elementLookup(h.arrays);
  const out: Candidate[] = [];
  for (const r of [...rows, ...killed.map((k) => ({ ...k, state: 'killed' as const }))]) {
    const key = keyOf(r.task);
    const element = elementOf(key);
    if (element) out.push({ ...r, key, element });
  }
  return out;
}

/** A launch with tasks to judge: those whose element is gone, and those killed by Slurm's signals. */
interface ToJudge {
  launch: LaunchRow;
  h: SlurmHandles;
  judged: Candidate[];
  gone: Map<string, Element>;
  stillLive: Map<string, Element>;
  /** Elements pending again after they ran (requeued: preemption, scontrol requeue). */
  pendingAgain: Set<string>;
}

/**
 * Reconcile Slurm launches after their runners' records were ingested, with one squeue for all their arrays
 * and one accounting read for all their gone elements, however many launches are open. Tasks whose element is
 * gone without a final record, and tasks ended `killed` by Slurm's signals, get what the element's fate says
 * (accounting, the element's output file, drover's cancel requests): timeout, cancelled, killed, error or
 * lost. Runs inside a write transaction; does nothing when squeue cannot be asked or its answer cannot be read
 * whole. Returns the launches with a task a scheduler stop ended whose element Slurm still holds, or may: they
 * stay open.
 */
export function reconcileSlurm(ledger: Ledger, launches: readonly LaunchRow[]): ReadonlySet<number> {
  const open = launches.flatMap((launch) => {
    const h = slurmHandles(launch);
    if (!h) return []; // still being submitted
    const first = candidates(ledger, launch, h);
    return first.length > 0 ? [{ launch, h, first }] : [];
  });
  if (open.length === 0) return NONE_KEPT_OPEN;
  // Launches with a task a scheduler stop ended whose element Slurm still holds: completing a requeue, the
  // element pends and runs again (its task is queued then). Closed now, the launch's record would miss that run.
  const keepOpen = new Set<number>();
  const killed = (c: Candidate) => c.state === 'killed';
  const warn = (message: string) => ledger.warnOnce(message);
  const live = liveElements(
    open.flatMap((o) => o.h.arrays.map((a) => a.id)),
    warn,
  );
  if (!live) {
    for (const o of open) if (o.first.some(killed)) keepOpen.add(o.launch.id);
    return keepOpen;
  }
  const isGone = (c: Candidate) => !live.has(elementName(c.element));
  const toJudge = (c: Candidate) => killed(c) || isGone(c);
  const judging: ToJudge[] = [];
  for (const { launch, h, first } of open) {
    if (!first.some(toJudge)) continue;
    // Records an element wrote just before it left the queue: read them before judging it.
    ingestLaunch(ledger, launch);
    const judged = candidates(ledger, launch, h).filter(toJudge);
    if (judged.length === 0) continue;
    const gone = new Map<string, Element>();
    const stillLive = new Map<string, Element>();
    const pendingAgain = new Set<string>();
    for (const c of judged) {
      const name = elementName(c.element);
      (isGone(c) ? gone : stillLive).set(name, c.element);
      // A task that ran, whose element pends: Slurm requeued the element, which runs again.
      if (killed(c) && live.get(name)?.state === 'PD') pendingAgain.add(name);
      else if (killed(c) && !isGone(c)) keepOpen.add(launch.id);
    }
    judging.push({ launch, h, judged, gone, stillLive, pendingAgain });
  }
  if (judging.length === 0) return keepOpen;
  const ends = elementEnds(
    judging.map((j) => ({
      accounting: j.h.accounting,
      launch: j.launch,
      gone: [...j.gone.values()],
      live: [...j.stillLive.values()],
    })),
    warn,
  );
  for (const [i, j] of judging.entries()) settle(ledger, j, ends[i]!);
  return keepOpen;
}

/** Give each judged task of a launch what its element's fate says. */
function settle(ledger: Ledger, j: ToJudge, ends: Map<string, ElementEnd>): void {
  const { launch, judged, gone } = j;
  const cancels = cancelRequests(launch.dir);
  const runners = startedGroups(ledger, launch.id);
  const unfinished = new Map<string, number[]>();
  for (const c of judged) {
    const name = elementName(c.element);
    const end = ends.get(name);
    const v = verdict({
      state: c.state,
      end,
      cancelRequested: cancels === 'all' || cancels.has(c.task),
      runnerStarted: runners.has(c.key),
      elementRan: gone.has(name) ? fs.existsSync(elementOutFile(launch.dir, c.element)) : true,
    });
    if (c.state === 'killed' && j.pendingAgain.has(name)) {
      awaitRerun(ledger, launch.job_id, launch.id, c.task, c.attempt!, PREEMPTED);
    } else if (c.state === 'killed') {
      // Restate only with facts: a known fate of the element, or (for a runner's scheduler stop) an element
      // that is gone, so nothing better will come. A task that died of a signal of its own stays as it is.
      const informed = v.state !== 'killed' || end?.state === 'OUT_OF_MEMORY' || end?.state === 'PREEMPTED';
      if (informed || (c.reason === SCHEDULER_STOP && gone.has(name))) {
        restateEnd(ledger, launch.job_id, launch.id, c.task, c.attempt!, 'killed', v.state, v.reason);
      }
    } else if (v.state === 'error' && c.state === 'queued') {
      // An attempt that never started, with the reason: what Grid Engine's Eqw tasks get too.
      recordError(ledger, launch.job_id, launch.id, c.task, v.reason);
    } else {
      const k = JSON.stringify([v.state, v.reason]);
      const list = unfinished.get(k);
      if (list) list.push(c.task);
      else unfinished.set(k, [c.task]);
    }
  }
  for (const [k, tasks] of unfinished) {
    const [state, reason] = JSON.parse(k) as [TerminalState, string];
    markUnfinished(ledger, launch.job_id, launch.id, tasks, state, reason);
  }
}
