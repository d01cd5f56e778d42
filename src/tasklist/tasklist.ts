import { usageError } from '../errors.js';

/**
 * Tasklists name sets of task ids: comma-separated items, each `N`, `first-last` or `first-last:step`
 * (`1-3:1,5,8-9`). Ids start at 1. This module is pure: parse, expand, condense.
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
  const trimmed = text.trim();
  if (trimmed === '') throw usageError(`empty tasklist '${text}': give ids like 1-3,5,8-9`);
  return trimmed.split(',').map((raw) => {
    const item = raw.trim();
    const m = ITEM.exec(item);
    if (!m) {
      const why = item === '' ? 'an empty item' : `'${item}'`;
      throw usageError(`bad tasklist item ${why} in '${text}': use N, FIRST-LAST or FIRST-LAST:STEP`);
    }
    const first = Number(m[1]);
    const last = m[2] === undefined ? first : Number(m[2]);
    const step = m[3] === undefined ? 1 : Number(m[3]);
    if (first < 1) throw usageError(`bad tasklist item '${item}' in '${text}': task ids start at 1`);
    if (last < first) throw usageError(`bad tasklist item '${item}' in '${text}': write the range low-high`);
    if (step < 1) throw usageError(`bad tasklist item '${item}' in '${text}': the step must be at least 1`);
    if (!Number.isSafeInteger(last))
      throw usageError(`bad tasklist item '${item}' in '${text}': id too large`);
    return { first, last, step };
  });
}

/** Expand blocks to the sorted, de-duplicated list of ids they name. */
export function expandBlocks(blocks: readonly TaskBlock[]): number[] {
  const ids: number[] = [];
  for (const b of blocks) for (let id = b.first; id <= b.last; id += b.step) ids.push(id);
  ids.sort((a, b) => a - b);
  return ids.filter((id, i) => i === 0 || ids[i - 1] !== id);
}

/**
 * Parse a tasklist to sorted unique ids. With `maxId`, ids above it are refused: the message names them and
 * the job's size.
 */
export function parseTasklist(text: string, maxId?: number, jobname?: string): number[] {
  const ids = expandBlocks(parseBlocks(text));
  if (maxId !== undefined) {
    const over = ids.filter((id) => id > maxId);
    if (over.length > 0) {
      const whose = jobname === undefined ? 'the job' : `job '${jobname}'`;
      throw usageError(
        `tasklist '${text}' names task ${condenseIds(over)} but ${whose} has tasks 1-${maxId}: pick ids in that range`,
      );
    }
  }
  return ids;
}

/** Condense ids (any order, duplicates allowed) into blocks: runs of step 1, or of another step with 3+ ids. */
export function condenseBlocks(input: readonly number[]): TaskBlock[] {
  const ids = [...new Set(input)].sort((a, b) => a - b);
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
