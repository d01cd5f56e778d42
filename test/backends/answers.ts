import assert from 'node:assert/strict';
import type { Parsed } from '../../src/backends/cluster/answer.js';

/** The value of a parse that must have read its answer whole. */
export function wholeValue<T>(parsed: Parsed<T>): T {
  if (!parsed.ok) assert.fail(`the answer did not parse whole: ${parsed.why}`);
  return parsed.value;
}
