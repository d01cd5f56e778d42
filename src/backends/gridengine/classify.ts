import type { TerminalState } from '../../protocol/states.js';
import { type AcctRecord, FAILED_LIMIT } from './parse.js';

/**
 * Pure decisions of reconciliation: what became of a task whose array element left Grid Engine, from the
 * element's accounting record (qacct) and drover's own cancel requests.
 */

/** The reason a runner gives a task it stopped because it was sent SIGTERM (the runners' one vocabulary). */
export { SCHEDULER_STOP } from '../../runner/reasons.js';

/** Seconds an element may be gone from qstat without an accounting record before its tasks count as lost. */
export const ACCOUNTING_GRACE_S = 60;

/** Seconds a whole `qstat -j` answer may lack the reason of an element in Eqw before it gets a general one. */
export const EQW_REASON_GRACE_S = 30;

/** An element reconciliation sees in Eqw this round, and what its job's `qstat -j` said of it. */
export interface EqwSeen {
  /** Its name (`job.index`). */
  name: string;
  /** Its job's `qstat -j` gave a whole answer. */
  answered: boolean;
  /** Grid Engine's reason in that answer, if the answer had one for it. */
  reason: string | undefined;
}

/**
 * The reasons to record for elements in Eqw, and the first sightings to keep of those still waiting for one.
 * Sightings are made afresh each round from the elements in Eqw now: an element that was not (it left Eqw, or
 * its tasks were recorded) loses its sighting, so if it is in Eqw again it waits its own grace. Where `qstat -j`
 * gave no whole answer an element's sighting is kept as it was (nothing new is known of it).
 */
export function eqwReasons(
  previous: Readonly<Record<string, number>> | undefined,
  seen: readonly EqwSeen[],
  now: number,
): { reasons: Map<string, string>; sightings: Record<string, number> } {
  const reasons = new Map<string, string>();
  const sightings: Record<string, number> = {};
  for (const e of seen) {
    const before = previous?.[e.name];
    if (!e.answered) {
      if (before !== undefined) sightings[e.name] = before;
      continue;
    }
    if (e.reason !== undefined) {
      reasons.set(e.name, e.reason);
      continue;
    }
    const since = before ?? now;
    if (now - since >= EQW_REASON_GRACE_S) reasons.set(e.name, 'Grid Engine gave no reason');
    else sightings[e.name] = since;
  }
  return { reasons, sightings };
}

/** What reconciliation knows about an element that left qstat. */
export interface GoneFacts {
  /** Its accounting record, when qacct has one. */
  acct: AcctRecord | undefined;
  /** Seconds since reconciliation first saw it gone. */
  goneFor: number;
  /** The launch's time limit per element (seconds), when it had one. */
  duration: number | undefined;
  /** A runner of its group wrote records (so the element got as far as starting drover's runner). */
  runnerStarted: boolean;
  /** The element's own output file exists (so Grid Engine started its script). */
  elementRan: boolean;
}

/** A verdict: the task's state and why. */
export interface Verdict {
  state: TerminalState;
  reason: string;
}

function failure(a: AcctRecord): string {
  return a.failed === 0 ? `exit ${a.exitStatus}` : `failed ${a.failed}: ${a.failedText}`;
}

function limitVerdict(g: GoneFacts, a: AcctRecord): Verdict {
  return g.duration !== undefined
    ? { state: 'timeout', reason: `the array element hit its time limit (h_rt ${g.duration} s)` }
    : { state: 'killed', reason: `Grid Engine killed the array element at a limit (${failure(a)})` };
}

/** An element that ended before drover's runner started in it: the backend could not start its tasks. */
function beforeRunner(what: string): Verdict {
  return {
    state: 'error',
    reason: `the array element ended${what} before drover's runner started: see its output in the launch's gridengine/ folder`,
  };
}

/**
 * A task still queued or running (`started`) in the ledger whose element is gone, with no final record from its
 * runner. Undefined: not known yet (no accounting record so far).
 */
export function goneTaskVerdict(cancelled: boolean, started: boolean, g: GoneFacts): Verdict | undefined {
  if (cancelled) return { state: 'cancelled', reason: 'cancelled by the user' };
  const a = g.acct;
  if (!a) {
    if (g.goneFor < ACCOUNTING_GRACE_S) return undefined;
    if (!g.runnerStarted && g.elementRan) return beforeRunner(' (qacct has no record of it)');
    return {
      state: 'lost',
      reason: 'the array element left Grid Engine without a record of this task, and qacct has none',
    };
  }
  if (a.failed === FAILED_LIMIT) return limitVerdict(g, a);
  if (a.failed !== 0 && !a.started)
    return { state: 'error', reason: `Grid Engine could not start the array element (${failure(a)})` };
  if (a.exitStatus > 128) {
    const how = `the array element was ended by signal ${a.exitStatus - 128} (${failure(a)})`;
    return started
      ? { state: 'killed', reason: how }
      : { state: 'lost', reason: `${how} before the task started` };
  }
  if (!g.runnerStarted) return beforeRunner(` (${failure(a)})`);
  return { state: 'lost', reason: `the array element ended (${failure(a)}) without a record of this task` };
}

/** Seconds before the time limit within which a stop counts as the time limit (Grid Engine enforces h_rt late). */
export const LIMIT_SLACK_S = 2;

/**
 * A task its runner recorded `killed` because Grid Engine stopped the element (SIGUSR2 relayed as SIGTERM):
 * `cancelled` when the user cancelled it, `timeout` when the element script saw the stop at its time limit
 * (`stoppedAfter`: seconds since the script started, from its stop file), else still `killed`.
 */
export function stoppedTaskVerdict(
  cancelled: boolean,
  stoppedAfter: number | undefined,
  duration: number | undefined,
): Verdict {
  if (cancelled) return { state: 'cancelled', reason: 'cancelled by the user' };
  if (duration !== undefined && stoppedAfter !== undefined && stoppedAfter >= duration - LIMIT_SLACK_S)
    return { state: 'timeout', reason: `the array element hit its time limit (h_rt ${duration} s)` };
  return {
    state: 'killed',
    reason:
      stoppedAfter === undefined
        ? 'Grid Engine stopped the array element'
        : `Grid Engine stopped the array element after ${stoppedAfter} s (qdel, or a limit other than h_rt)`,
  };
}
