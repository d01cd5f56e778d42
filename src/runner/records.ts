import fs from 'node:fs';
import type { TerminalState } from '../ledger/states.js';

/**
 * Attempt records: what a runner writes, one JSON object per line, to a file only it writes. The CLI ingests
 * them into the ledger (DESIGN.md: compute nodes never write the database). Version 1.
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
  out: string;
  err: string;
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
}

/** A task the runner was given but never started, because it was cancelled. */
export interface SkipRecord {
  type: 'skip';
  task: number;
  at: number;
  state: 'cancelled';
}

/** The runner finished: every task it was given has an end or skip record above. */
export interface RunnerEndRecord {
  type: 'runner-end';
  at: number;
  reason: 'done' | 'cancelled';
}

export type AttemptRecord = RunnerRecord | StartRecord | EndRecord | SkipRecord | RunnerEndRecord;

/**
 * Appends records to a file. The records of one turn of the event loop go out in one write at its end (before
 * the runner waits for anything again), so a SIGKILL loses only what happened in the turn it interrupts.
 */
export class RecordWriter {
  private readonly fd: number;
  private pending = '';
  constructor(readonly file: string) {
    this.fd = fs.openSync(file, 'a');
  }
  /** Append one record as one line. */
  write(record: AttemptRecord): void {
    if (this.pending === '') process.nextTick(() => this.flush());
    this.pending += `${JSON.stringify(record)}\n`;
  }
  /** Write what is pending now. */
  flush(): void {
    if (this.pending === '') return;
    fs.writeSync(this.fd, this.pending);
    this.pending = '';
  }
  close(): void {
    this.flush();
    fs.closeSync(this.fd);
  }
}

/** Parse complete lines of records; unreadable lines are skipped (single appends cannot tear a line). */
export function parseRecords(text: string): { records: AttemptRecord[] } {
  const records: AttemptRecord[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      records.push(JSON.parse(line) as AttemptRecord);
    } catch {
      // skip
    }
  }
  return { records };
}

/** Unix time in seconds with millisecond precision. */
export function nowSec(): number {
  return Date.now() / 1000;
}
