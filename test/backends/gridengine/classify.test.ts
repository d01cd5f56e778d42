import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  ACCOUNTING_GRACE_S,
  goneTaskVerdict,
  stoppedTaskVerdict,
} from '../../../src/backends/gridengine/classify.js';
import type { AcctRecord } from '../../../src/backends/gridengine/parse.js';

const acct = (a: Partial<AcctRecord>): AcctRecord => ({
  job: '1',
  index: 1,
  failed: 0,
  failedText: '',
  exitStatus: 0,
  started: true,
  ...a,
});

test('a gone element without final records: qacct decides, cancel requests first', () => {
  const facts = (a: AcctRecord | undefined, duration?: number) => ({ acct: a, goneFor: 0, duration });
  assert.equal(goneTaskVerdict(true, true, facts(acct({ failed: 37 }), 60))?.state, 'cancelled');
  assert.equal(
    goneTaskVerdict(false, true, facts(acct({ failed: 37, exitStatus: 137 }), 60))?.state,
    'timeout',
  );
  assert.equal(goneTaskVerdict(false, true, facts(acct({ failed: 37 })))?.state, 'killed');
  assert.equal(goneTaskVerdict(false, true, facts(acct({ failed: 26, started: false })))?.state, 'error');
  const killed = goneTaskVerdict(false, true, facts(acct({ exitStatus: 137 })));
  assert.equal(killed?.state, 'killed');
  assert.match(killed!.reason, /signal 9/);
  assert.equal(goneTaskVerdict(false, true, facts(acct({ exitStatus: 0 })))?.state, 'lost');
  // A task the element never reached is lost, not killed: it did not run.
  assert.equal(goneTaskVerdict(false, false, facts(acct({ exitStatus: 137 })))?.state, 'lost');
});

test('no accounting record: wait, then lost after the grace period', () => {
  assert.equal(goneTaskVerdict(false, true, { acct: undefined, goneFor: 5, duration: undefined }), undefined);
  assert.equal(
    goneTaskVerdict(false, true, { acct: undefined, goneFor: ACCOUNTING_GRACE_S, duration: undefined })
      ?.state,
    'lost',
  );
});

test('a task killed by a scheduler stop: cancelled, timeout at the limit, else killed', () => {
  assert.equal(stoppedTaskVerdict(true, 61, 60).state, 'cancelled');
  assert.equal(stoppedTaskVerdict(false, 61, 60).state, 'timeout');
  assert.equal(stoppedTaskVerdict(false, 59, 60).state, 'timeout');
  assert.equal(stoppedTaskVerdict(false, 30, 60).state, 'killed');
  assert.equal(stoppedTaskVerdict(false, 30, undefined).state, 'killed');
  assert.equal(stoppedTaskVerdict(false, undefined, 60).state, 'killed');
});
