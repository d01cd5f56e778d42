import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ElementEnd } from '../../../src/backends/slurm/accounting.js';
import { type TaskFacts, verdict } from '../../../src/backends/slurm/verdict.js';
import { PREEMPTED } from '../../../src/runner/reasons.js';

const facts = (f: Partial<TaskFacts>): TaskFacts => ({
  state: 'queued',
  end: undefined,
  cancelRequested: false,
  runnerStarted: true,
  elementRan: true,
  ...f,
});
const end = (state: string, more: Partial<ElementEnd> = {}): ElementEnd => ({
  state,
  source: 'jobcomp',
  ...more,
});

test('a drover cancel request wins: pending elements Slurm forgot entirely are cancelled', () => {
  assert.equal(
    verdict(facts({ cancelRequested: true, runnerStarted: false, elementRan: false })).state,
    'cancelled',
  );
  assert.equal(
    verdict(facts({ state: 'killed', cancelRequested: true, end: end('CANCELLED') })).state,
    'cancelled',
  );
});

test('an element that hit its time limit: its running and never-started tasks time out', () => {
  assert.equal(verdict(facts({ state: 'killed', end: end('TIMEOUT') })).state, 'timeout');
  assert.equal(verdict(facts({ state: 'running', end: end('TIMEOUT') })).state, 'timeout');
  const q = verdict(facts({ state: 'queued', end: end('TIMEOUT') }));
  assert.equal(q.state, 'timeout');
  assert.match(q.reason, /before the task started/);
});

test('out of memory kills running tasks; node failure loses them; scancel outside drover cancels', () => {
  assert.equal(verdict(facts({ state: 'running', end: end('OUT_OF_MEMORY') })).state, 'killed');
  assert.equal(verdict(facts({ state: 'queued', end: end('OUT_OF_MEMORY') })).state, 'lost');
  assert.equal(verdict(facts({ state: 'running', end: end('NODE_FAIL') })).state, 'lost');
  assert.equal(verdict(facts({ state: 'running', end: end('CANCELLED') })).state, 'cancelled');
  // Preemption, and its kin, say so.
  assert.match(verdict(facts({ state: 'running', end: end('PREEMPTED') })).reason, /^preempted: /);
  assert.match(verdict(facts({ state: 'running', end: end('NODE_FAIL') })).reason, /^preempted: /);
  // Requeued: the element runs again; a task its stop ended stays killed, preempted, until its next runner says.
  assert.deepEqual(verdict(facts({ state: 'killed', end: end('REQUEUED', { source: 'output' }) })), {
    state: 'killed',
    reason: PREEMPTED,
  });
});

test('an element that ended before drover’s runner started is an error pointing at its output', () => {
  const v = verdict(facts({ runnerStarted: false, end: end('FAILED', { exitCode: 127 }) }));
  assert.equal(v.state, 'error');
  assert.match(v.reason, /FAILED, exit 127.*slurm-\*\.out/);
  assert.equal(verdict(facts({ runnerStarted: false, elementRan: true })).state, 'error');
});

test('no source knows: lost; a scheduler stop with no better reason stays killed, with the reason given', () => {
  assert.equal(verdict(facts({ runnerStarted: false, elementRan: false })).state, 'lost');
  assert.equal(verdict(facts({ state: 'running', end: end('FAILED', { signal: 9 }) })).state, 'lost');
  const k = verdict(facts({ state: 'killed', end: end('COMPLETED', { exitCode: 0 }) }));
  assert.deepEqual(k, { state: 'killed', reason: 'Slurm stopped its array element (COMPLETED, exit 0)' });
});
