import { parseBlocks } from '../../tasklist/tasklist.js';
import { completeLines, type Parsed, unreadable, whole } from '../cluster/answer.js';

/** Pure parsers of Grid Engine's client output (Son of Grid Engine 8.1.9; see docs/gridengine.md). */

/** Array elements Grid Engine still has, by job id then index, with their state letters (`qw`, `r`, `Eqw`...). */
export type QueueSnapshot = Map<string, Map<number, string>>;

/** The leaf elements of each `<job_list>` of a qstat document, or why it is not one whole document. */
function jobLists(xml: string): Parsed<Map<string, string>[]> {
  const body = xml.replace(/^\s*<\?xml[^>]*\?>/, '');
  if (!/<\/job_info>\s*$/.test(body)) return unreadable('it has no closing </job_info>');
  const lists: Map<string, string>[] = [];
  const open: string[] = [];
  let list: Map<string, string> | undefined;
  let text = '';
  for (const m of body.matchAll(/<(\/?)([A-Za-z_][\w.-]*)(?:\s[^<>]*?)?(\/?)>|([^<]+)|(<)/g)) {
    const [, close, name, empty, chars, stray] = m;
    if (stray !== undefined) return unreadable('it has a broken tag');
    if (chars !== undefined) {
      // Text belongs only in the fields of a job_list (<state>r</state>).
      if (chars.trim() !== '' && (list === undefined || open.at(-1) === 'job_list'))
        return unreadable('it has text outside its fields');
      text += chars;
    } else if (!close) {
      if (list && open.at(-1) !== 'job_list') return unreadable('a field holds elements');
      if (empty) {
        if (name === 'job_list') return unreadable('a job_list is empty');
        list?.set(name!, ''); // <queue_name/>
        continue;
      }
      if (name === 'job_list') {
        if (list) return unreadable('a job_list holds another');
        list = new Map();
      }
      open.push(name!);
      text = '';
    } else {
      if (open.pop() !== name) return unreadable('its elements do not nest');
      if (name === 'job_list') {
        lists.push(list!);
        list = undefined;
      } else if (list) list.set(name!, text.trim());
      text = '';
    }
  }
  if (open.length > 0) return unreadable('it has unclosed elements');
  return whole(lists);
}

/**
 * Parse `qstat -xml`: running elements are listed one by one, pending ones (also `hqw` and `Eqw`) as ranges
 * (`2-6:2`, `9,10`). Only the jobs in `jobs` are kept when given. An answer that is not one whole document
 * (cut short, or with text of another kind), or with a job it cannot read, is unreadable.
 */
export function parseQstatXml(xml: string, jobs?: ReadonlySet<string>): Parsed<QueueSnapshot> {
  const lists = jobLists(xml);
  if (!lists.ok) return lists;
  const out: QueueSnapshot = new Map();
  for (const fields of lists.value) {
    const job = fields.get('JB_job_number') ?? '';
    const state = fields.get('state') ?? '';
    const tasks = fields.get('tasks');
    if (!/^\d+$/.test(job) || !/^[A-Za-z]+$/.test(state)) return unreadable('a job has no number or state');
    let blocks: ReturnType<typeof parseBlocks> = [];
    try {
      if (tasks) blocks = parseBlocks(tasks);
    } catch {
      return unreadable('a job lists tasks it cannot read');
    }
    if (jobs && !jobs.has(job)) continue;
    let byIndex = out.get(job);
    if (!byIndex) {
      byIndex = new Map();
      out.set(job, byIndex);
    }
    if (!tasks) byIndex.set(0, state); // not an array job (drover always submits arrays)
    for (const b of blocks) for (let i = b.first; i <= b.last; i += b.step) byIndex.set(i, state);
  }
  return whole(out);
}

/** True for a state Grid Engine cannot start by itself: `Eqw`, `Ehqw`, ... (an `E` in the letters). */
export function isErrorState(state: string): boolean {
  return state.includes('E');
}

/**
 * The per-element error reasons of `qstat -j JOB` (`error reason    2:   11/30/2026 01:53:09 [0:8216]: error:
 * can't open output file ...`), by index, without the time stamp and process prefix; unreadable when the answer
 * is cut short (its `scheduling info` part, always last, is missing, or its last line has no newline).
 */
export function parseErrorReasons(text: string): Parsed<Map<number, string>> {
  const lines = completeLines(text);
  if (!lines.ok) return lines;
  if (!lines.value.some((l) => l.startsWith('job_number:'))) return unreadable('it names no job');
  const info = lines.value.findIndex((l) => l.startsWith('scheduling info:'));
  if (info < 0 || lines.value.slice(info + 1).some((l) => !/^\s/.test(l)))
    return unreadable('it lacks its last part');
  const out = new Map<number, string>();
  for (const m of text.matchAll(/^error reason\s+(\d+):\s*(.*)$/gm)) {
    const reason = m[2]!
      .replace(/^\d\d\/\d\d\/\d{4} \d\d:\d\d:\d\d\s*/, '')
      .replace(/^\[[^\]]*\]:\s*/, '')
      .replace(/^error:\s*/, '')
      .trim();
    out.set(Number(m[1]), reason);
  }
  return whole(out);
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

/** The fields of qacct's records that drover reads: a record without any of them is not whole. */
const ACCT_FIELDS = ['jobnumber', 'taskid', 'start_time', 'failed', 'exit_status'];

/**
 * Parse `qacct -j` output (a line of `=` before each record); an element accounted more than once (rerun) keeps
 * its last record. Unreadable when the answer is cut inside a line, or a record lacks a field drover reads or has
 * one it cannot read.
 */
export function parseQacct(text: string): Parsed<Map<string, AcctRecord>> {
  const lines = completeLines(text);
  if (!lines.ok) return lines;
  if (lines.value.some((l) => l.trim() !== '' && !/^([a-z_][a-z0-9_]*([ \t].*)?|=+[ \t]*)$/.test(l)))
    return unreadable('a line is not a field of a record');
  const blocks = lines.value.join('\n').split(/^=+[ \t]*$/m);
  if (blocks.shift()?.trim()) return unreadable('it does not begin with a record');
  const out = new Map<string, AcctRecord>();
  for (const block of blocks) {
    const field = (name: string) => new RegExp(`^${name}[ \\t]+(.*)$`, 'm').exec(block)?.[1]?.trim();
    if (ACCT_FIELDS.some((f) => field(f) === undefined)) return unreadable('a record lacks a field');
    const job = field('jobnumber')!;
    const task = field('taskid')!;
    const f = /^(\d+)\s*(?::\s*(.*))?$/.exec(field('failed')!);
    const exit = /^(\d+)(?:\s+\(\w+\))?$/.exec(field('exit_status')!);
    if (!/^\d+$/.test(job) || !/^(\d+|undefined)$/.test(task) || !f || !exit)
      return unreadable('a record has a field it cannot read');
    const index = task === 'undefined' ? 0 : Number(task);
    out.set(`${job}.${index}`, {
      job,
      index,
      failed: Number(f[1]),
      failedText: f[2]?.trim() ?? '',
      exitStatus: Number(exit[1]),
      started: !/^-\/-/.test(field('start_time')!),
    });
  }
  return whole(out);
}

/** Grid Engine's failure code for a job killed at a hard limit (h_rt, h_cpu, h_vmem) by the qmaster. */
export const FAILED_LIMIT = 37;
