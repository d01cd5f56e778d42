import type { AttemptKey, ReportBatch } from '../protocol/messages.js';

/**
 * Which records of a worker's report are not its to write (docs/concepts.md invariant 3): pure, over plain values. A
 * worker may write only the records of attempts the controller handed to it and that are still its own: the
 * start of the attempt it holds (once), then its end; or a skip of a task it holds and never started. A record
 * of any other launch, task or attempt — another worker's, one taken back when the worker was lost, a direct
 * launch's, one that never was — is refused, and so is the whole report.
 */

/** A task a worker holds, as the check sees it. */
export interface HeldView {
  attempt: number;
  started: boolean;
}

/**
 * The attempts whose records in `batches` (the batches not applied yet, in sequence order) the worker may not
 * write, given what it holds (`launch:task` → attempt) and the open pool launches. Empty: the report is its own.
 */
export function refusedRecords(
  batches: readonly ReportBatch[],
  held: ReadonlyMap<string, HeldView>,
  openLaunches: ReadonlySet<number>,
): AttemptKey[] {
  // What the report itself does to the worker's tasks: a start, then an end, each once.
  const state = new Map<string, { attempt: number; started: boolean; ended: boolean }>();
  const refused = new Map<string, AttemptKey>();
  const refuse = (launch: number, task: number, attempt: number) =>
    refused.set(`${launch}:${task}:${attempt}`, { launch, task, attempt });
  for (const b of batches) {
    // A batch names its launch even when it has no record: one not open is no launch of this worker's.
    if (b.records.length === 0 && !openLaunches.has(b.launch)) refuse(b.launch, 0, 0);
    for (const r of b.records) {
      const attempt = r.type === 'start' || r.type === 'end' ? r.attempt : 0;
      if (r.type !== 'start' && r.type !== 'end' && r.type !== 'skip') {
        refuse(b.launch, 0, 0);
        continue;
      }
      if (!openLaunches.has(b.launch)) {
        refuse(b.launch, r.task, attempt);
        continue;
      }
      const key = `${b.launch}:${r.task}`;
      let s = state.get(key);
      if (!s) {
        const h = held.get(key);
        if (h) {
          s = { attempt: h.attempt, started: h.started, ended: false };
          state.set(key, s);
        }
      }
      if (!s || s.ended) {
        refuse(b.launch, r.task, attempt);
        continue;
      }
      if (r.type === 'start') {
        if (r.attempt !== s.attempt || s.started) refuse(b.launch, r.task, attempt);
        else s.started = true;
      } else if (r.type === 'end') {
        if (r.attempt !== s.attempt || !s.started) refuse(b.launch, r.task, attempt);
        else s.ended = true;
      } else if (s.started) {
        refuse(b.launch, r.task, 0);
      } else {
        s.ended = true;
      }
    }
  }
  return [...refused.values()];
}

/** The batches of a report not applied yet (sequence numbers after `applied`), in order, each number once. */
export function freshBatches(batches: readonly ReportBatch[], applied: number): ReportBatch[] {
  const out: ReportBatch[] = [];
  let last = applied;
  for (const b of [...batches].sort((x, y) => x.seq - y.seq)) {
    if (b.seq <= last) continue;
    out.push(b);
    last = b.seq;
  }
  return out;
}
