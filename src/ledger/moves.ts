import { STATES, type State, TERMINAL_STATES } from '../protocol/states.js';

/**
 * The legal moves of a task's state within a launch (launch_tasks.state), the one table every transition is
 * checked against (transitions/). A task's own state (tasks.state) is the state it has in its newest launch, so
 * it moves by these same moves; besides them it enters a launch (→ `queued`) and starts again as `pending` when
 * its command changes (jobs.ts syncJobTasks). `pending` here stands for "not in this launch yet". Staying in the
 * same state is always allowed (a transition applied twice changes nothing). Why each move exists:
 *
 * | from                        | to           | when                                                          |
 * | --------------------------- | ------------ | ------------------------------------------------------------- |
 * | pending                     | queued       | the task enters the launch (createLaunch, a pool expansion)   |
 * | queued                      | running      | its attempt started                                           |
 * | queued                      | any terminal | start and end in one batch; an end whose start line was       |
 * |                             |              | damaged; cancelled before it ran; lost, or not startable      |
 * |                             |              | (`error`), as the backend says                                |
 * | running                     | any terminal | its attempt ended; the backend lost it; the user cancelled it |
 * | running                     | queued       | its attempt ended and the runner tries it again               |
 * | a terminal but `succeeded`  | queued       | a retry (the runner's, or a pool's requeue)                   |
 * | a terminal but `succeeded`  | running      | a later attempt started (a runner retrying it), or a late     |
 * |                             |              | start record of a task taken for lost                         |
 * | a terminal but `succeeded`  | any terminal | a later attempt ended; a late end record says what really     |
 * |                             |              | happened; the backend says why it ended (restateEnd)          |
 * | succeeded                   | (none)       | a success is final within its launch                          |
 *
 * Never: back to `pending` within a launch, or out of `succeeded`. Which attempt a record is about is checked
 * by each transition (an attempt ends once; a replay changes nothing).
 */
const AFTER_AN_END: readonly State[] = ['queued', 'running', ...TERMINAL_STATES];

export const MOVES: Readonly<Record<State, readonly State[]>> = {
  pending: ['queued'],
  queued: ['running', ...TERMINAL_STATES],
  running: ['queued', ...TERMINAL_STATES],
  succeeded: [],
  failed: AFTER_AN_END,
  killed: AFTER_AN_END,
  timeout: AFTER_AN_END,
  cancelled: AFTER_AN_END,
  lost: AFTER_AN_END,
  error: AFTER_AN_END,
};

/** True when a task's state within a launch may go from `from` to `to` (staying put is always legal). */
export function isLegalMove(from: State, to: State): boolean {
  return from === to || MOVES[from].includes(to);
}

/** The states a task may be in, within a launch, to move to `to` (itself included). */
export function sourcesOf(to: State): State[] {
  return STATES.filter((from) => isLegalMove(from, to));
}

/**
 * SQL that is true when a task's state within a launch, in column `from`, may go to `to`: the table above as a
 * condition, for transitions that check many tasks in one statement.
 */
export function legalFromSql(from: string, to: State): string {
  const never = STATES.filter((f) => !isLegalMove(f, to)).map((f) => `'${f}'`);
  return never.length > 0 ? `${from} NOT IN (${never.join(', ')})` : '1';
}

/** A move a transition was asked to make and did not, because the table above does not allow it. */
export interface RefusedMove {
  launch: number;
  task: number;
  /** The task's state in the launch; undefined when the launch has no such task. */
  from: State | undefined;
  to: State;
}

/** One line saying what was refused, for a warning or a log. */
export function describeRefusal(r: RefusedMove, what: string): string {
  return r.from === undefined
    ? `${what}: launch ${r.launch} has no task ${r.task}: not applied`
    : `${what}: task ${r.task} of launch ${r.launch} may not go from ${r.from} to ${r.to}: not applied`;
}
