import { usageError } from '../errors.js';
import { listItems } from '../util/list-items.js';
import { quoted } from '../util/quote.js';

/**
 * Tasklists name sets of task ids: comma-separated items, each `N`, `first-last` or `first-last:step`
 * (`1-3:1,5,8-9`). Ids start at 1. This module is pure: parse, resolve against a job, condense.
 */

/** One block of a tasklist: ids first, first+step, ... up to last (inclusive). */
export interface TaskBlock {
  first: number;
  last: number;
  step: number;
}

const ITEM = /^(\d+)(?:-(\d+)(?::(\d+))?)?$/;

/** Parse a tasklist into its blocks, in the order written; throws a usage error naming the bad part. */
export function parseBlocks(text: string): TaskBlock[] {
  if (text.trim() === '') throw usageError(`empty tasklist ${quoted(text)}: give ids like 1-3,5,8-9`);
  return listItems(text).map((item) => {
    const m = ITEM.exec(item);
    if (!m) {
      const why = item === '' ? 'an empty item' : quoted(item);
      throw usageError(`bad tasklist item ${why} in ${quoted(text)}: use N, FIRST-LAST or FIRST-LAST:STEP`);
    }
    const first = Number(m[1]);
    const last = m[2] === undefined ? first : Number(m[2]);
    const step = m[3] === undefined ? 1 : Number(m[3]);
    if (first < 1)
      throw usageError(`bad tasklist item ${quoted(item)} in ${quoted(text)}: task ids start at 1`);
    if (last < first)
      throw usageError(`bad tasklist item ${quoted(item)} in ${quoted(text)}: write the range low-high`);
    if (step < 1)
      throw usageError(`bad tasklist item ${quoted(item)} in ${quoted(text)}: the step must be at least 1`);
    if (!Number.isSafeInteger(last) || !Number.isSafeInteger(step))
      throw usageError(`bad tasklist item ${quoted(item)} in ${quoted(text)}: id too large`);
    return { first, last, step };
  });
}

/** Expand blocks to the sorted, de-duplicated list of ids they name (scheduler output; user input: parseTasklist). */
export function expandBlocks(blocks: readonly TaskBlock[]): number[] {
  const ids: number[] = [];
  for (const b of blocks) for (let id = b.first; id <= b.last; id += b.step) ids.push(id);
  ids.sort((a, b) => a - b);
  return ids.filter((id, i) => i === 0 || ids[i - 1] !== id);
}

/** The last id a block really names (`1-10:4` names 1, 5, 9). */
function lastOf(b: TaskBlock): number {
  return b.first + Math.floor((b.last - b.first) / b.step) * b.step;
}

/** How many ids a block names. */
function sizeOf(b: TaskBlock): number {
  return Math.floor((b.last - b.first) / b.step) + 1;
}

/** The part of each block above `maxId`, computed from the blocks alone (nothing is expanded). */
function blocksAbove(blocks: readonly TaskBlock[], maxId: number): TaskBlock[] {
  const over: TaskBlock[] = [];
  for (const b of blocks) {
    const last = lastOf(b);
    if (last <= maxId) continue;
    const first = b.first > maxId ? b.first : b.first + (Math.floor((maxId - b.first) / b.step) + 1) * b.step;
    over.push({ first, last, step: first === last ? 1 : b.step });
  }
  return over;
}

/**
 * Merge blocks that name ids of one progression (same step, same first id modulo the step) and touch or
 * overlap: `1-10,5-20` → `1-20`, and a block written many times counts once. Blocks of different steps may
 * still overlap; expansion marks ids, so that only costs their sizes.
 */
function mergeBlocks(blocks: readonly TaskBlock[]): TaskBlock[] {
  const byClass = new Map<string, TaskBlock[]>();
  for (const b of blocks) {
    const step = b.first === lastOf(b) ? 1 : b.step;
    const key = `${step}:${b.first % step}`;
    const list = byClass.get(key) ?? [];
    list.push({ first: b.first, last: lastOf(b), step });
    byClass.set(key, list);
  }
  const out: TaskBlock[] = [];
  for (const list of byClass.values()) {
    list.sort((a, b) => a.first - b.first);
    let cur = { ...list[0]! };
    for (const b of list.slice(1)) {
      if (b.first <= cur.last + cur.step) cur.last = Math.max(cur.last, b.last);
      else {
        out.push(cur);
        cur = { ...b };
      }
    }
    out.push(cur);
  }
  return out;
}

/** Blocks may name at most this many ids per task of the job, after merging (different steps overlapping). */
const OVERLAP_FACTOR = 16;

/**
 * The one way user input becomes task ids (launch, list, cancel, the controller's API): parse a tasklist and
 * resolve it against a job of `maxId` tasks, to sorted unique ids. The range is checked from the blocks before
 * anything is expanded, so `1-1000000000` on a 10-task job is refused at once, naming the ids out of range;
 * expansion then costs at most a few times the job's size, whatever was written.
 */
export function parseTasklist(text: string, maxId: number, jobname?: string): number[] {
  const blocks = parseBlocks(text);
  const over = blocksAbove(blocks, maxId);
  if (over.length > 0) {
    const whose = jobname === undefined ? 'the job' : `job '${jobname}'`;
    const has = maxId > 0 ? `has tasks 1-${maxId}` : 'has no tasks';
    const shown = over.length > 3 ? `${formatBlocks(over.slice(0, 3))},...` : formatBlocks(over);
    throw usageError(
      `tasklist ${quoted(text)} names task ${shown} but ${whose} ${has}: pick ids in that range`,
    );
  }
  const merged = mergeBlocks(blocks);
  if (merged.length === 1) {
    const b = merged[0]!;
    return Array.from({ length: sizeOf(b) }, (_, i) => b.first + i * b.step);
  }
  const named = merged.reduce((n, b) => n + sizeOf(b), 0);
  if (named > OVERLAP_FACTOR * maxId) {
    throw usageError(
      `tasklist ${quoted(text)} names the same tasks over and over (${named} ids for a job of ${maxId}): write each range once`,
    );
  }
  const lo = merged.reduce((m, b) => Math.min(m, b.first), Number.POSITIVE_INFINITY);
  const hi = merged.reduce((m, b) => Math.max(m, b.last), 0);
  const marked = new Uint8Array(hi - lo + 1);
  for (const b of merged) for (let id = b.first; id <= b.last; id += b.step) marked[id - lo] = 1;
  const ids: number[] = [];
  for (let i = 0; i < marked.length; i++) if (marked[i] === 1) ids.push(lo + i);
  return ids;
}

/** Condense ids (any order, duplicates allowed) into blocks: runs of step 1, or of another step with 3+ ids. */
export function condenseBlocks(input: readonly number[]): TaskBlock[] {
  // Ids already rising (a launch's, read from the ledger in order) are used as they are: a Set and a sorted copy
  // of a million ids cost ~50 MB.
  const ids = isRising(input) ? input : [...new Set(input)].sort((a, b) => a - b);
  const blocks: TaskBlock[] = [];
  let i = 0;
  while (i < ids.length) {
    const first = ids[i]!;
    if (i + 1 >= ids.length) {
      blocks.push({ first, last: first, step: 1 });
      break;
    }
    const step = ids[i + 1]! - first;
    let j = i + 1;
    while (j + 1 < ids.length && ids[j + 1]! - ids[j]! === step) j++;
    const length = j - i + 1;
    if (step === 1 || length >= 3) {
      blocks.push({ first, last: ids[j]!, step });
      i = j + 1;
    } else {
      blocks.push({ first, last: first, step: 1 });
      i += 1;
    }
  }
  return blocks;
}

/** True when every id is greater than the one before it (sorted, no duplicates). */
function isRising(ids: readonly number[]): boolean {
  for (let i = 1; i < ids.length; i++) if (ids[i]! <= ids[i - 1]!) return false;
  return true;
}

/** Format blocks as text: `N`, `A-B` (step 1) or `A-B:S`. */
export function formatBlocks(blocks: readonly TaskBlock[]): string {
  return blocks
    .map((b) =>
      b.first === b.last
        ? `${b.first}`
        : b.step === 1
          ? `${b.first}-${b.last}`
          : `${b.first}-${b.last}:${b.step}`,
    )
    .join(',');
}

/** Condense ids to the shortest-reading tasklist text this module produces, e.g. [1,2,3,5] → `1-3,5`. */
export function condenseIds(ids: readonly number[]): string {
  return formatBlocks(condenseBlocks(ids));
}
