import type { TerminalState } from '../protocol/states.js';
import { ELEMENT_LIMIT, SCHEDULER_STOP, SERVER_LOST, timeLimitReason, UNKNOWN_STATUS } from './reasons.js';

/**
 * How an attempt's end becomes its state: the one table every runner follows (docs/runners.md shows it). The
 * TypeScript runner evaluates it here; each program in src/runner/programs/ that records ends (single.pl,
 * element.py, element.sh) has one function that tests the same rows in the same order, with the reasons and
 * signal names it receives from program-settings.ts. The runner conformance suite (test/runner/conformance.test.ts)
 * runs every runner on every row and checks they record the same.
 */

/** Linux's signal names by number, 1 to 31, as bash's `kill -l` prints them: records say `SIG` + the name. */
export const SIGNAL_NAMES = [
  'HUP',
  'INT',
  'QUIT',
  'ILL',
  'TRAP',
  'ABRT',
  'BUS',
  'FPE',
  'KILL',
  'USR1',
  'SEGV',
  'USR2',
  'PIPE',
  'ALRM',
  'TERM',
  'STKFLT',
  'CHLD',
  'CONT',
  'STOP',
  'TSTP',
  'TTIN',
  'TTOU',
  'URG',
  'XCPU',
  'XFSZ',
  'VTALRM',
  'PROF',
  'WINCH',
  'IO',
  'PWR',
  'SYS',
] as const;

/** A signal as records name it: `SIGKILL` for 9; `SIG34` for one without a name (real-time signals). */
export function signalName(n: number): string {
  return `SIG${SIGNAL_NAMES[n - 1] ?? n}`;
}

/** Why a runner stopped an attempt itself: a cancel request, its time limit, or its own SIGTERM. */
export type StopCause = 'cancel' | 'timeout' | 'scheduler' | 'element' | 'server';

/** How an attempt's process ended, as waitpid says: its exit code, the number of the signal, or unknown. */
export type WaitStatus = { code: number } | { signal: number } | 'unknown';

/** What an `end` record says of how its attempt ended. */
export interface EndFields {
  state: TerminalState;
  exit_code: number | null;
  signal: string | null;
  reason?: string;
}

/** One row of the table: when it applies, and the state and reason it gives. */
export interface EndStateRow {
  /** When the row applies, in the words of docs/runners.md. */
  when: string;
  /** True when the row applies to an attempt the runner stopped for `stop` (null: it did not) that ended so. */
  applies(stop: StopCause | null, status: WaitStatus): boolean;
  state: TerminalState;
  /** The record's `exit_code` and `signal`, in the words of docs/runners.md. */
  fields: string;
  /** The record's reason (given the attempt's time limit in seconds, or `T` for the docs), if it has one. */
  reason?(taskTimeout: number | 'T' | undefined): string;
}

/** The exit code of a shell whose child died of a signal: 128 + its number. */
const SHELL_SIGNAL_BASE = 128;

/** 128+N from a shell for a signal N the table names: the shell's child died of signal N. */
function shellSignal(status: WaitStatus): number | null {
  if (typeof status === 'string' || !('code' in status)) return null;
  const n = status.code - SHELL_SIGNAL_BASE;
  return n >= 1 && n <= SIGNAL_NAMES.length ? n : null;
}

/** The table, first matching row wins. */
export const END_STATE_TABLE: readonly EndStateRow[] = [
  {
    when: 'stopped by the runner for a cancel request (`drover cancel`; on a local launch also Ctrl-C, SIGTERM)',
    applies: (stop) => stop === 'cancel',
    state: 'cancelled',
    fields: 'as rows 6 to 10 say',
  },
  {
    when: 'stopped by the runner at its time limit (`--task-timeout`)',
    applies: (stop) => stop === 'timeout',
    state: 'timeout',
    fields: 'as rows 6 to 10 say',
    reason: (t) => timeLimitReason(t ?? 0),
  },
  {
    when: 'the runner was sent SIGTERM before it saw the task end: the scheduler stops the array element (its time limit, preemption, `scancel`, `qdel`)',
    applies: (stop) => stop === 'scheduler',
    state: 'killed',
    fields: 'as rows 6 to 10 say',
    reason: () => SCHEDULER_STOP,
  },
  {
    when: 'stopped by the runner just before its array element’s time limit (`--duration`) with `--requeue`: the element runs again',
    applies: (stop) => stop === 'element',
    state: 'timeout',
    fields: 'as rows 6 to 10 say',
    reason: () => ELEMENT_LIMIT,
  },
  {
    when: "drover's process server died while it ran: the runner stopped it by its pid",
    applies: (stop) => stop === 'server',
    state: 'lost',
    fields: '`null`, `null`',
    reason: () => SERVER_LOST,
  },
  {
    when: 'ended, but the runner could not learn how (bash loses the status of a child that ends while a trap runs)',
    applies: (_, status) => status === 'unknown',
    state: 'killed',
    fields: '`null`, `null`',
    reason: () => UNKNOWN_STATUS,
  },
  {
    when: "ended by signal N (`kill`, a crash, the kernel's out-of-memory killer)",
    applies: (_, status) => typeof status !== 'string' && 'signal' in status,
    state: 'killed',
    fields: '`null`, `SIG` + the name of N',
  },
  {
    when: 'exited 128+N, N from 1 to 31: a shell between drover and the program (`sh -c`, a header or footer) telling that signal N ended its child',
    applies: (_, status) => shellSignal(status) !== null,
    state: 'killed',
    fields: '`null`, `SIG` + the name of N',
  },
  {
    when: 'exited 0',
    applies: (_, status) => typeof status !== 'string' && 'code' in status && status.code === 0,
    state: 'succeeded',
    fields: '`0`, `null`',
  },
  {
    when: 'exited with any other code; 126 (found, not executable) and 127 (not found) with the reason in its stderr log',
    applies: () => true,
    state: 'failed',
    fields: 'the code, `null`',
  },
];

/** The `exit_code` and `signal` of an end record: 128+N from a shell is told as signal N (see the table). */
export function endFields(status: WaitStatus): Pick<EndFields, 'exit_code' | 'signal'> {
  if (status === 'unknown') return { exit_code: null, signal: null };
  if ('signal' in status) return { exit_code: null, signal: signalName(status.signal) };
  const n = shellSignal(status);
  return n === null ? { exit_code: status.code, signal: null } : { exit_code: null, signal: signalName(n) };
}

/** What an attempt's end record says, by the first row of the table that applies. */
export function endState(stop: StopCause | null, status: WaitStatus, taskTimeout?: number): EndFields {
  const row = END_STATE_TABLE.find((r) => r.applies(stop, status))!;
  const reason = row.reason?.(taskTimeout);
  return { state: row.state, ...endFields(status), ...(reason !== undefined ? { reason } : {}) };
}

/** A state `--retries` reruns (while the runner is not stopping): all but succeeded and cancelled. */
export function isRetried(state: TerminalState): boolean {
  return state !== 'succeeded' && state !== 'cancelled';
}
