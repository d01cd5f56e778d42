import assert from 'node:assert/strict';
import { DroverError } from '../../src/errors.js';

/** Assert `fn` throws a one-line usage error (exit 2) matching `re`. */
export function refuses(fn: () => unknown, re: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof DroverError, String(err));
    assert.equal(err.exitCode, 2);
    assert.match(err.message, re);
    assert.ok(!/[\n\r]/.test(err.message), `one line: ${JSON.stringify(err.message)}`);
    return true;
  });
}
