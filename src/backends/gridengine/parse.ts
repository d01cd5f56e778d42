import { parseBlocks } from '../../tasklist/tasklist.js';

/** Pure parsers of Grid Engine's client output (Son of Grid Engine 8.1.9; see docs/gridengine.md). */

/** Array elements Grid Engine still has, by job id then index, with their state letters (`qw`, `r`, `Eqw`...). */
export type QueueSnapshot = Map<string, Map<number, string>>;

/**
 * Parse `qstat -xml`: running elements are listed one by one, pending ones (also `hqw` and `Eqw`) as ranges
 * (`2-6:2`, `9,10`). Only the jobs in `jobs` are kept when given.
 */
export function parseQstatXml(xml: string, jobs?: ReadonlySet<string>): QueueSnapshot {
  const out: QueueSnapshot = new Map();
  for (const m of xml.matchAll(/<job_list[^>]*>([\s\S]*?)<\/job_list>/g)) {
    const body = m[1]!;
    const job = /<JB_job_number>\s*(\d+)\s*</.exec(body)?.[1];
    if (job === undefined || (jobs && !jobs.has(job))) continue;
    const state = /<state>([^<]*)</.exec(body)?.[1]?.trim() ?? '';
    const tasks = /<tasks>([^<]*)</.exec(body)?.[1]?.trim();
    let byIndex = out.get(job);
    if (!byIndex) {
      byIndex = new Map();
      out.set(job, byIndex);
    }
    if (!tasks) {
      byIndex.set(0, state); // not an array job (drover always submits arrays)
      continue;
    }
    for (const b of parseBlocks(tasks)) for (let i = b.first; i <= b.last; i += b.step) byIndex.set(i, state);
  }
  return out;
}

/** True for a state Grid Engine cannot start by itself: `Eqw`, `Ehqw`, ... (an `E` in the letters). */
export function isErrorState(state: string): boolean {
  return state.includes('E');
}

/**
 * The per-element error reasons of `qstat -j JOB` (`error reason    2:   11/30/2026 01:53:09 [0:8216]: error:
 * can't open output file ...`), by index, without the time stamp and process prefix.
 */
export function parseErrorReasons(text: string): Map<number, string> {
  const out = new Map<number, string>();
  for (const m of text.matchAll(/^error reason\s+(\d+):\s*(.*)$/gm)) {
    const reason = m[2]!
      .replace(/^\d\d\/\d\d\/\d{4} \d\d:\d\d:\d\d\s*/, '')
      .replace(/^\[[^\]]*\]:\s*/, '')
      .replace(/^error:\s*/, '')
      .trim();
    out.set(Number(m[1]), reason);
  }
  return out;
}

/** One accounting record of an array element (`qacct -j JOB -t RANGE`). */
export interface AcctRecord {
  job: string;
  index: number;
  /** Grid Engine's failure code (0: the job script ran and exited by itself or by a signal). */
  failed: number;
  /** The text after the failure code, e.g. `qmaster enforced h_rt, h_cpu, or h_vmem limit`. */
  failedText: string;
  /** The job script's exit status (128 + signal when a signal ended it). */
  exitStatus: number;
  /** False when the element never started (`start_time -/-`). */
  started: boolean;
}

/** Parse `qacct -j` output; an element accounted more than once (rerun) keeps its last record. */
export function parseQacct(text: string): Map<string, AcctRecord> {
  const out = new Map<string, AcctRecord>();
  for (const block of text.split(/^=+\s*$/m)) {
    const field = (name: string) => new RegExp(`^${name}\\s+(.*)$`, 'm').exec(block)?.[1]?.trim();
    const job = field('jobnumber');
    const task = field('taskid');
    const failed = field('failed');
    if (job === undefined || failed === undefined) continue;
    const index = task === undefined || task === 'undefined' ? 0 : Number(task);
    const f = /^(\d+)\s*(?::\s*(.*))?$/.exec(failed);
    const rec: AcctRecord = {
      job,
      index,
      failed: f ? Number(f[1]) : -1,
      failedText: f ? (f[2]?.trim() ?? '') : failed,
      exitStatus: Number.parseInt(field('exit_status') ?? '0', 10) || 0,
      started: !/^-\/-/.test(field('start_time') ?? '-/-'),
    };
    out.set(`${job}.${index}`, rec);
  }
  return out;
}

/** Grid Engine's failure code for a job killed at a hard limit (h_rt, h_cpu, h_vmem) by the qmaster. */
export const FAILED_LIMIT = 37;
