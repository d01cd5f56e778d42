/**
 * The closed set of task states (docs/concepts.md). Used by the CLI, JSON output, the database's CHECK constraints and
 * the runner's records alike.
 */
export const STATES = [
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

/** A task's (or an attempt's) state. */
export type State = (typeof STATES)[number];

/** States an attempt can end in. */
export type TerminalState = Exclude<State, 'pending' | 'queued' | 'running'>;

export const TERMINAL_STATES: readonly TerminalState[] = [
  'succeeded',
  'failed',
  'killed',
  'timeout',
  'cancelled',
  'lost',
  'error',
];

/** True for states a task never leaves on its own. */
export function isTerminal(state: State): state is TerminalState {
  return (TERMINAL_STATES as readonly State[]).includes(state);
}

/** `--failed`: terminal but neither succeeded nor cancelled. */
export function isFailedState(state: State): boolean {
  return isTerminal(state) && state !== 'succeeded' && state !== 'cancelled';
}

/** `--unfinished`: not succeeded and not queued or running now (includes pending and cancelled). */
export function isUnfinishedState(state: State): boolean {
  return state !== 'succeeded' && state !== 'queued' && state !== 'running';
}

/** A record with every state as a key, all zero: the shape of `counts` in JSON output. */
export function zeroCounts(): Record<State, number> {
  return Object.fromEntries(STATES.map((s) => [s, 0])) as Record<State, number>;
}

/** SQL list of the states, for CHECK constraints. */
export const STATES_SQL = STATES.map((s) => `'${s}'`).join(', ');
