import fs from 'node:fs';
import path from 'node:path';
import { linesBefore, readFrom } from '../files.js';
import { inRunOrder } from '../protocol/record-files.js';
import { type AttemptRecord, parseRecords } from '../protocol/records.js';
import { isProcessAlive, shortHostname } from '../util/proc.js';
import { applyRecords } from './apply-records.js';
import type { LaunchRow } from './launches.js';
import type { Ledger } from './ledger.js';
import { describeRefusal } from './moves.js';

/** The folder where a launch's runners write their record files. */
export function recordsDir(launch: Pick<LaunchRow, 'dir'>): string {
  return path.join(launch.dir, 'records');
}

/** True when a runner of the launch recorded a task's start (or tried to): the launch happened, in part. */
export function anyStartRecorded(launch: Pick<LaunchRow, 'dir'>): boolean {
  const dir = recordsDir(launch);
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return false;
  }
  return names.some((n) => {
    try {
      return fs.readFileSync(path.join(dir, n), 'utf8').includes('"type":"start"');
    } catch {
      return true;
    }
  });
}

/** New bytes of a record file past the ingested offset, split into whole lines and a tail without a line end. */
interface Chunk {
  /** The whole lines. */
  text: string;
  /** Bytes after the last line end: a line being written, or torn if its writer is gone. */
  tail: number;
  /** Offset just past the whole lines. */
  end: number;
}

function readNew(file: string, offset: number): Chunk | undefined {
  const buf = readFrom(file, () => offset)?.buf;
  if (!buf || buf.length === 0) return undefined;
  const whole = buf.lastIndexOf(0x0a) + 1;
  return { text: buf.toString('utf8', 0, whole), tail: buf.length - whole, end: offset + whole };
}

/**
 * True when the runner writing `file` has ended, so the file will not grow: it is on this host and its
 * process is gone. Unknown (false) for a runner on another host. Every runner names its file
 * `g<group>.<host>.<pid>.jsonl`; its runner record adds the pid's start time, to tell a reused pid.
 */
function writerGone(ledger: Ledger, file: string): boolean {
  const row = ledger
    .stmt(
      `SELECT r.host, r.pid, r.pid_start FROM runner_files f JOIN runners r ON r.launch_id = f.launch_id AND r.name = f.runner
       WHERE f.path = ?`,
    )
    .get(file) as { host: string; pid: number; pid_start: string | null } | undefined;
  const m = /\.([^.]+)\.(\d+)\.jsonl$/.exec(file);
  const host = row?.host ?? m?.[1];
  const pid = row?.pid ?? Number(m?.[2]);
  if (host !== shortHostname() || !Number.isSafeInteger(pid) || pid <= 0) return false;
  return !isProcessAlive(pid, row?.pid_start ?? null);
}

/**
 * Ingest what the launch's runners wrote since the last call, idempotently: the offset of each file moves in
 * the same transaction as the records it covers, so concurrent or repeated calls apply each record once.
 * A line that is not a record is skipped with a warning naming the file and line; the records after it count.
 * A last line without its line end is left for the next call while its runner may still be writing it; once
 * the runner is gone it is torn for good, and is cut with a warning (never guessed at). Warnings go to the
 * ledger's warning sink, after the transaction commits; so does a record whose move the legal moves refuse
 * (moves.ts). Returns the number of records applied.
 */
export function ingestLaunch(ledger: Ledger, launch: LaunchRow): number {
  const dir = recordsDir(launch);
  let files: string[];
  try {
    files = inRunOrder(fs.readdirSync(dir).filter((f) => f.endsWith('.jsonl')));
  } catch {
    return 0;
  }
  const warnings: string[] = [];
  // One transaction for all of a launch's files: a commit costs ~0.4 ms, and a launch of one task per array
  // element has a file per element (1000 elements: 0.4 s of commits for the first status after them).
  const applied = ledger.write(() => {
    warnings.length = 0; // (a transaction that failed and is run again warns once)
    let n = 0;
    for (const name of files) {
      const file = path.join(dir, name);
      const row = ledger.stmt('SELECT offset FROM ingested WHERE path = ?').get(file) as
        | { offset: number }
        | undefined;
      const offset = row?.offset ?? 0;
      let chunk = readNew(file, offset);
      if (!chunk) continue;
      let final = false;
      if (chunk.tail > 0 && writerGone(ledger, file)) {
        // Read again: the file is final now, and the runner may have ended its line just before it died.
        final = true;
        chunk = readNew(file, offset) ?? chunk;
      }
      const { records, faults } = parseRecords(chunk.text);
      for (const r of applyRecords(ledger, launch, records, file).refused) {
        warnings.push(`${file}: ${describeRefusal(r.move, `the ${whatRecord(r.record)}`)}`);
      }
      let end = chunk.end;
      if (faults.length > 0 || (final && chunk.tail > 0)) {
        const base = linesBefore(file, offset);
        for (const f of faults) {
          warnings.push(
            `${file}:${base + f.line + 1}: ${f.reason}: skipped${f.recovered ? ' (the whole record after the damaged part counts)' : ''}; the records after it count`,
          );
        }
        if (final && chunk.tail > 0) {
          const line = base + chunk.text.split('\n').length;
          warnings.push(
            `${file}:${line}: the file ends in the middle of a record (${chunk.tail} bytes), and its runner is gone: cut`,
          );
          end += chunk.tail;
        }
      }
      ledger
        .stmt(
          'INSERT INTO ingested (path, offset) VALUES (?, ?) ON CONFLICT (path) DO UPDATE SET offset = excluded.offset',
        )
        .run(file, end);
      n += records.length;
    }
    return n;
  });
  for (const w of warnings) ledger.warn(w);
  return applied;
}

/** A record, named for a warning: `end record of task 3 attempt 2`. */
function whatRecord(r: AttemptRecord): string {
  if (r.type === 'start' || r.type === 'end' || r.type === 'preempted')
    return `${r.type} record of task ${r.task} attempt ${r.attempt}`;
  if (r.type === 'skip') return `skip record of task ${r.task}`;
  if (r.type === 'skip-many')
    return `skip-many record (${r.ranges.length} range(s) from task ${r.ranges[0]![0]})`;
  return `${r.type} record`;
}
