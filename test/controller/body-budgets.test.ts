import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import {
  BODY_BUDGETS,
  BODY_MEMORY_BOUND,
  budgetOf,
  SMALL_BODY_BYTES,
} from '../../src/controller/body-budgets.js';
import { FILE_CHUNK_BYTES, MAX_BODY_BYTES } from '../../src/protocol/messages.js';
import { repoRoot } from '../helpers/drover.js';

/** Which budget a request's body is read in (pure), and the memory bound docs/pools.md states. */

test('each kind of sender reads its bodies in a budget of its own', () => {
  const worker = { kind: 'worker' as const };
  const user = { kind: 'user' as const };
  // A public route (the login) is public whoever calls it: a token sent along changes nothing.
  assert.equal(budgetOf({ public: true, bodyLimit: 4096, token: undefined }), 'public');
  assert.equal(budgetOf({ public: true, bodyLimit: 4096, token: user }), 'public');
  // Workers' life signs (routes of small bodies) apart from their reports and registrations.
  assert.equal(budgetOf({ public: false, bodyLimit: SMALL_BODY_BYTES, token: worker }), 'workerSmall');
  assert.equal(budgetOf({ public: false, bodyLimit: MAX_BODY_BYTES, token: worker }), 'worker');
  // A worker's file chunks (--no-shared-fs) never wait behind its reports or life signs; a user's are a user's.
  const files = { public: false, bodyLimit: FILE_CHUNK_BYTES, files: true };
  assert.equal(budgetOf({ ...files, token: worker }), 'workerFiles');
  assert.equal(budgetOf({ ...files, token: user }), 'user');
  // A user token or a dashboard session (a user row).
  assert.equal(budgetOf({ public: false, bodyLimit: MAX_BODY_BYTES, token: user }), 'user');
});

test('the public budget is the smallest and shortest; docs/pools.md states the memory bound', () => {
  for (const b of Object.values(BODY_BUDGETS)) {
    assert.ok(BODY_BUDGETS.public.bytes <= b.bytes, b.name);
    assert.ok(BODY_BUDGETS.public.deadlineMs <= b.deadlineMs, b.name);
  }
  const doc = fs.readFileSync(path.join(repoRoot, 'docs', 'pools.md'), 'utf8');
  const stated = /at most ([\d.]+) MiB of request bodies\s+are read and parsed at once/.exec(doc)?.[1];
  assert.equal(Number(stated), BODY_MEMORY_BOUND / (1 << 20));
});
