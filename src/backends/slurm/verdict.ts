import type { TerminalState } from '../../protocol/states.js';
import { PREEMPTED } from '../../runner/reasons.js';
import type { ElementEnd } from './accounting.js';

/**
 * Pure decisions of reconciliation: what became of a task whose array element Slurm no longer has queued,
 * when its runner left no final record of it (or recorded it `killed` by the scheduler's SIGTERM).
 * Reasons name no element or path, so tasks with the same fate are updated together.
 */

/** What reconciliation knows about one task of a gone element. */
export interface TaskFacts {
  /** `queued`: never started; `running`: started, no end; `killed`: ended by the scheduler's SIGTERM. */
  state: 'queued' | 'running' | 'killed';
  /** How its element ended, if any source says. */
  end: ElementEnd | undefined;
  /** drover cancel was asked to cancel it. */
  cancelRequested: boolean;
  /** A runner of its group wrote records (so the element got as far as starting drover's runner). */
  runnerStarted: boolean;
  /** The element's output file exists (so the element ran at all). */
  elementRan: boolean;
}

/** The state a task gets, and why. */
export interface Verdict {
  state: TerminalState;
  reason: string;
}

function exitText(end: ElementEnd): string {
  if (end.signal !== undefined) return `${end.state}, signal ${end.signal}`;
  if (end.exitCode !== undefined) return `${end.state}, exit ${end.exitCode}`;
  return end.state;
}

/** The verdict on a task of an element gone from squeue. */
export function verdict(f: TaskFacts): Verdict {
  const started = f.state !== 'queued';
  const s = f.end?.state;
  if (f.cancelRequested) return { state: 'cancelled', reason: 'cancelled by the user (drover cancel)' };
  if (s === 'TIMEOUT' || s === 'DEADLINE') {
    return {
      state: 'timeout',
      reason: started
        ? 'its array element hit its time limit (--duration)'
        : 'its array element hit its time limit (--duration) before the task started',
    };
  }
  if (s === 'CANCELLED') return { state: 'cancelled', reason: 'its array element was cancelled (scancel)' };
  if (s === 'OUT_OF_MEMORY') {
    return started
      ? { state: 'killed', reason: 'its array element ran out of memory (--mem)' }
      : { state: 'lost', reason: 'its array element ran out of memory (--mem) before the task started' };
  }
  if (s === 'PREEMPTED') {
    return started
      ? { state: 'killed', reason: 'preempted: its array element was preempted' }
      : { state: 'lost', reason: 'preempted: its array element was preempted before the task started' };
  }
  // Stopped to run again (scontrol requeue, preemption by requeue): the element's next runner says how its
  // tasks go on (runner/restart.ts); until then a stopped task stays as its runner recorded it.
  if (s === 'REQUEUED') return { state: 'killed', reason: PREEMPTED };
  if (s === 'NODE_FAIL' || s === 'BOOT_FAIL') {
    return { state: 'lost', reason: `preempted: the node of its array element failed (${s})` };
  }
  if (f.state === 'killed') {
    return {
      state: 'killed',
      reason: `Slurm stopped its array element${f.end ? ` (${exitText(f.end)})` : ''}`,
    };
  }
  if (!f.runnerStarted && (f.end !== undefined || f.elementRan)) {
    return {
      state: 'error',
      reason: `its array element ended${f.end ? ` (${exitText(f.end)})` : ''} before drover's runner started: see the element's slurm-*.out in the launch folder`,
    };
  }
  if (f.end) {
    return {
      state: 'lost',
      reason: `its array element ended (${exitText(f.end)}) without a record of the task`,
    };
  }
  return {
    state: 'lost',
    reason: 'Slurm no longer knows its array element and no record of the task exists',
  };
}
