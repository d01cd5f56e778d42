import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { recordsDir } from '../../src/ledger/ingest.js';
import type { LaunchRow } from '../../src/ledger/launches.js';
import type { Ledger } from '../../src/ledger/ledger.js';
import type { RunnerRecord } from '../../src/protocol/records.js';
import { processStartTime, shortHostname } from '../../src/util/proc.js';

/** A record as the line a runner writes. */
export const line = (r: unknown) => `${JSON.stringify(r)}\n`;

/**
 * A stand-in for a runner's process, for ingestion to ask whether a record file's writer is alive: a real
 * `sleep` process while `alive`, then gone. Killed after the test.
 */
export class Writer {
  private child: ChildProcess | undefined;
  readonly pid: number;
  constructor(t: { after(fn: () => void | Promise<void>): void }) {
    this.child = spawn('sleep', ['600'], { stdio: 'ignore' });
    this.pid = this.child.pid!;
    t.after(() => this.die());
  }
  /** Its runner record. */
  runner(launch: number, at = 1): RunnerRecord {
    return {
      type: 'runner',
      v: 1,
      runner: `g1.${shortHostname()}.${this.pid}`,
      launch,
      job: 'J',
      host: shortHostname(),
      pid: this.pid,
      pid_start: processStartTime(this.pid),
      slots: 1,
      at,
    };
  }
  /** Its record file in a launch, named as runners name theirs. */
  file(l: LaunchRow): string {
    fs.mkdirSync(recordsDir(l), { recursive: true });
    return path.join(recordsDir(l), `g1.${shortHostname()}.${this.pid}.jsonl`);
  }
  /** End the process and wait until it is gone (reaped). */
  async die(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.child = undefined;
    if (child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await gone;
  }
}

/** Collect the ledger's warnings instead of printing them. */
export function captureWarnings(ledger: Ledger): string[] {
  const warnings: string[] = [];
  ledger.warn = (m) => warnings.push(m);
  return warnings;
}
