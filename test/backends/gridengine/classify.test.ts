import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  ACCOUNTING_GRACE_S,
  EQW_REASON_GRACE_S,
  eqwReasons,
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
  const facts = (a: AcctRecord | undefined, duration?: number) => ({
    acct: a,
    goneFor: 0,
    duration,
    runnerStarted: true,
    elementRan: true,
  });
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
  const facts = { acct: undefined, duration: undefined, runnerStarted: true, elementRan: true };
  assert.equal(goneTaskVerdict(false, true, { ...facts, goneFor: 5 }), undefined);
  assert.equal(goneTaskVerdict(false, true, { ...facts, goneFor: ACCOUNTING_GRACE_S })?.state, 'lost');
  // An element that ran but never started drover's runner could not start its tasks.
  const before = goneTaskVerdict(false, false, {
    ...facts,
    goneFor: ACCOUNTING_GRACE_S,
    runnerStarted: false,
  });
  assert.equal(before?.state, 'error');
  assert.match(before!.reason, /before drover's runner started/);
  const never = { ...facts, goneFor: ACCOUNTING_GRACE_S, runnerStarted: false, elementRan: false };
  assert.equal(goneTaskVerdict(false, false, never)?.state, 'lost');
});

test("an element that ended before drover's runner started (a failing header) makes its tasks error", () => {
  const facts = { goneFor: 0, duration: undefined, runnerStarted: false, elementRan: true };
  const v = goneTaskVerdict(false, false, { ...facts, acct: acct({ exitStatus: 7 }) });
  assert.deepEqual(v, {
    state: 'error',
    reason:
      "the array element ended (exit 7) before drover's runner started: see its output in the launch's gridengine/ folder",
  });
  // What accounting says first: a limit, an element never started, a signal.
  assert.equal(goneTaskVerdict(false, false, { ...facts, acct: acct({ failed: 37 }) })?.state, 'killed');
  assert.match(
    goneTaskVerdict(false, false, { ...facts, acct: acct({ failed: 26, started: false }) })!.reason,
    /could not start/,
  );
  assert.equal(goneTaskVerdict(false, false, { ...facts, acct: acct({ exitStatus: 137 }) })?.state, 'lost');
  assert.equal(goneTaskVerdict(true, false, { ...facts, acct: acct({ exitStatus: 7 }) })?.state, 'cancelled');
});

test('a task killed by a scheduler stop: cancelled, timeout at the limit, else killed', () => {
  assert.equal(stoppedTaskVerdict(true, 61, 60).state, 'cancelled');
  assert.equal(stoppedTaskVerdict(false, 61, 60).state, 'timeout');
  assert.equal(stoppedTaskVerdict(false, 59, 60).state, 'timeout');
  assert.equal(stoppedTaskVerdict(false, 30, 60).state, 'killed');
  assert.equal(stoppedTaskVerdict(false, 30, undefined).state, 'killed');
  assert.equal(stoppedTaskVerdict(false, undefined, 60).state, 'killed');
});

test('elements in Eqw: the reason when qstat -j gives it, a general one after the grace, sightings made afresh', () => {
  const now = 1000;
  const seen = (name: string, answered: boolean, reason?: string) => ({ name, answered, reason });
  // First sighting without a reason: it waits; with one: recorded at once.
  assert.deepEqual(eqwReasons(undefined, [seen('7.1', true), seen('7.2', true, 'no such file')], now), {
    reasons: new Map([['7.2', 'no such file']]),
    sightings: { '7.1': now },
  });
  // In the grace it keeps its first sighting; after it, the general reason and no sighting.
  const first = { '7.1': now - EQW_REASON_GRACE_S + 1 };
  assert.deepEqual(eqwReasons(first, [seen('7.1', true)], now), { reasons: new Map(), sightings: first });
  assert.deepEqual(eqwReasons({ '7.1': now - EQW_REASON_GRACE_S }, [seen('7.1', true)], now), {
    reasons: new Map([['7.1', 'Grid Engine gave no reason']]),
    sightings: {},
  });
  // No whole answer: nothing is learnt, the sighting stays as it was (and none is made).
  const old = { '7.1': now - 10 * EQW_REASON_GRACE_S };
  assert.deepEqual(eqwReasons(old, [seen('7.1', false), seen('7.2', false)], now), {
    reasons: new Map(),
    sightings: old,
  });
  // An element no longer in Eqw loses its sighting: back in Eqw later, it waits a grace of its own.
  const left = eqwReasons(old, [], now);
  assert.deepEqual(left, { reasons: new Map(), sightings: {} });
  assert.deepEqual(eqwReasons(left.sightings, [seen('7.1', true)], now + 1), {
    reasons: new Map(),
    sightings: { '7.1': now + 1 },
  });
});
