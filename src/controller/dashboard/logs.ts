import fs from 'node:fs';
import type { LogTail } from '../../protocol/dashboard.js';
import { extentOf, isEmptySlice, type LogPlace, readRange } from '../../protocol/log-slices.js';
import { openTaskFile } from '../../util/task-file.js';

/** How much of a log's end the task page shows. */
export const TAIL_BYTES = 16 * 1024;

/**
 * The tail of an attempt's output (its own file, or its slice of a segment): a stat and one read of at most
 * TAIL_BYTES, whatever the size.
 */
export function logTail(place: LogPlace | null, stream: 'out' | 'err' = 'out', bytes = TAIL_BYTES): LogTail {
  const file = place?.path ?? null;
  if (place === null || file === null || file === '') return { path: file, size: null, text: '', cut: false };
  let fd: number;
  try {
    fd = openTaskFile(file);
  } catch {
    return { path: file, size: isEmptySlice(place) ? 0 : null, text: '', cut: false };
  }
  try {
    const { start, end } = extentOf(fd, place, stream);
    const size = end - start;
    const from = Math.max(start, end - bytes);
    const text = readRange(fd, from, end).toString('utf8');
    return { path: file, size, text, cut: from > start };
  } finally {
    fs.closeSync(fd);
  }
}
