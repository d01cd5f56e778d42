import type { AccountingRecord, ElementState, FakeJob } from './state.js';

/** How one element ended, as its controller saw it. */
export interface ElementExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The controller's own SIGKILL (after a stop's grace) ended it. */
  killedByUs: boolean;
}

/** Where an element's output goes: open file descriptors, or why they cannot be opened. */
export type Outputs = { out: number; err: number } | { error: string };

/**
 * What differs between the FAKE Slurm and the FAKE Grid Engine when they run an element: its environment,
 * output files, how a stop is signalled, and the accounting record of its end.
 */
export interface Personality {
  /** The element's environment. */
  env(job: FakeJob, el: ElementState, host: string): Record<string, string>;
  /** Open the element's output files. */
  outputs(job: FakeJob, el: ElementState, host: string): Outputs;
  /** The program and arguments that run the element's script. */
  command(job: FakeJob): [string, string[]];
  /**
   * Who a stop signals: `tree` (Slurm: the script and every descendant) or `group` (Grid Engine: the script's
   * process group).
   */
  scope: 'tree' | 'group';
  /** The first signal of a stop, and the seconds until SIGKILL follows (0: the first signal is SIGKILL). */
  stopSignal(job: FakeJob): { signal: NodeJS.Signals; killAfterS: number };
  /** A line the scheduler writes into the element's output when it stops it, if any. */
  stopNotice(job: FakeJob, el: ElementState, why: 'cancel' | 'timeout', host: string): string | undefined;
  /** The accounting record of an element that ran and ended. */
  record(job: FakeJob, el: ElementState, exit: ElementExit, host: string): AccountingRecord;
  /** The record of an element that could not start (Grid Engine Eqw), if the scheduler writes one. */
  errorRecord?(job: FakeJob, el: ElementState): AccountingRecord;
  /** Write what else the scheduler writes when an element ends (Slurm's job completion log). */
  ended?(dir: string, job: FakeJob, rec: AccountingRecord, host: string): void;
}
