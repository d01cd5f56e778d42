import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { deadRunnerVerdict, type Unfinished } from '../../../src/backends/local/dead-runner.js';

/** What becomes of a dead runner's unfinished tasks, decided from the facts alone (docs/concepts.md, invariant 2). */

test('started and gone: lost; never started: cancelled; still alive: running', () => {
  const v = deadRunnerVerdict([
    { task: 1, state: 'running', alive: false },
    { task: 2, state: 'running', alive: true },
    { task: 3, state: 'queued', alive: false },
    { task: 4, state: 'queued', startedAttempt: 2, alive: false },
    { task: 5, state: 'queued', startedAttempt: 1, alive: true },
  ]);
  assert.deepEqual(v, { lost: [1, 4], cancelled: [3], running: [2, 5] });
});

test('property: each task gets exactly one fate; lost only with an attempt and no live process', () => {
  const unfinished = fc.uniqueArray(
    fc.record({
      task: fc.integer({ min: 1, max: 10_000 }),
      state: fc.constantFrom('queued' as const, 'running' as const),
      startedAttempt: fc.option(fc.integer({ min: 1, max: 9 }), { nil: undefined }),
      alive: fc.boolean(),
    }),
    { selector: (u) => u.task },
  );
  fc.assert(
    fc.property(unfinished, (tasks) => {
      const u = tasks.map((t) => {
        const x: Unfinished = { task: t.task, state: t.state, alive: t.alive };
        if (t.startedAttempt !== undefined) x.startedAttempt = t.startedAttempt;
        return x;
      });
      const v = deadRunnerVerdict(u);
      const all = [...v.lost, ...v.cancelled, ...v.running].sort((a, b) => a - b);
      assert.deepEqual(
        all,
        u.map((t) => t.task).sort((a, b) => a - b),
      );
      const byId = new Map(u.map((t) => [t.task, t]));
      for (const id of v.lost) {
        const t = byId.get(id)!;
        assert.ok(!t.alive, 'lost while a process lives');
        assert.ok(t.state === 'running' || t.startedAttempt !== undefined, 'lost without an attempt');
      }
      for (const id of v.cancelled) assert.ok(byId.get(id)!.state === 'queued');
    }),
  );
});
