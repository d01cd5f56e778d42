import fs from 'node:fs';
import path from 'node:path';
import { readFrom } from '../files.js';
import { type AttemptRecord, parseRecords, type StartRecord } from '../runner/records.js';
import type { LaunchRow } from './launches.js';
import type { Ledger } from './ledger.js';
import { addLaunchTimes, recordAttempt, recordEnd, recordSkip, recordStart } from './transitions.js';

/** The folder where a launch's runners write their record files. */
export function recordsDir(launch: Pick<LaunchRow, 'dir'>): string {
  return path.join(launch.dir, 'records');
}

/** Read new bytes of one record file past the ingested offset: complete lines only. */
function readNew(file: string, offset: number): { text: string; end: number } | undefined {
  const buf = readFrom(file, () => offset)?.buf;
  const lastNl = buf ? buf.lastIndexOf(0x0a) : -1;
  if (!buf || lastNl < 0) return undefined;
  return { text: buf.toString('utf8', 0, lastNl + 1), end: offset + lastNl + 1 };
}

/**
 * Apply a batch of records in order (inside a transaction). A start whose end is in the same batch is held
 * back and applied together with its end as one transition: that is the common case for short tasks.
 */
function applyBatch(ledger: Ledger, launch: LaunchRow, file: string, records: AttemptRecord[]): void {
  const held = new Map<string, StartRecord>();
  let first = Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  let busy = 0;
  for (const r of records) {
    switch (r.type) {
      case 'runner':
        ledger
          .stmt(
            `INSERT INTO runners (launch_id, name, host, pid, pid_start, started_at) VALUES (?, ?, ?, ?, ?, ?)
             ON CONFLICT DO NOTHING`,
          )
          .run(launch.id, r.runner, r.host, r.pid, r.pid_start, r.at);
        ledger
          .stmt('INSERT OR IGNORE INTO runner_files (launch_id, path, runner) VALUES (?, ?, ?)')
          .run(launch.id, file, r.runner);
        break;
      case 'start':
        held.set(`${r.task}.${r.attempt}`, r);
        break;
      case 'end': {
        const key = `${r.task}.${r.attempt}`;
        const start = held.get(key);
        if (start && recordAttempt(ledger, launch.job_id, launch.id, start, r)) {
          held.delete(key);
          first = Math.min(first, start.at);
          last = Math.max(last, r.at);
          busy += r.at - start.at;
        } else {
          if (start) held.delete(key);
          recordEnd(ledger, launch.job_id, launch.id, r);
        }
        break;
      }
      case 'skip':
        recordSkip(ledger, launch.job_id, launch.id, r);
        break;
      case 'runner-end': {
        const row = ledger.stmt('SELECT runner FROM runner_files WHERE path = ?').get(file) as
          | { runner: string }
          | undefined;
        if (row) {
          ledger
            .stmt('UPDATE runners SET ended_at = ? WHERE launch_id = ? AND name = ?')
            .run(r.at, launch.id, row.runner);
        }
        break;
      }
    }
  }
  for (const start of held.values()) recordStart(ledger, launch.job_id, launch.id, start);
  if (busy > 0 || Number.isFinite(first)) addLaunchTimes(ledger, launch.id, first, last, busy);
}

/**
 * Ingest what the launch's runners wrote since the last call, idempotently: the offset of each file moves in
 * the same transaction as the records it covers, so concurrent or repeated calls apply each record once.
 * Returns the number of records applied.
 */
export function ingestLaunch(ledger: Ledger, launch: LaunchRow): number {
  const dir = recordsDir(launch);
  let files: string[];
  try {
    files = fs.readdirSync(dir).filter((f) => f.endsWith('.jsonl'));
  } catch {
    return 0;
  }
  // One transaction for all of a launch's files: a commit costs ~0.4 ms, and a launch of one task per array
  // element has a file per element (1000 elements: 0.4 s of commits for the first status after them).
  return ledger.write(() => {
    let applied = 0;
    for (const name of files) {
      const file = path.join(dir, name);
      const row = ledger.stmt('SELECT offset FROM ingested WHERE path = ?').get(file) as
        | { offset: number }
        | undefined;
      const chunk = readNew(file, row?.offset ?? 0);
      if (!chunk) continue;
      const { records } = parseRecords(chunk.text);
      applyBatch(ledger, launch, file, records);
      ledger
        .stmt(
          'INSERT INTO ingested (path, offset) VALUES (?, ?) ON CONFLICT (path) DO UPDATE SET offset = excluded.offset',
        )
        .run(file, chunk.end);
      applied += records.length;
    }
    return applied;
  });
}
