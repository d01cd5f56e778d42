import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { SIGNAL_NAMES } from '../../src/runner/end-state.js';
import type { RunSettings } from '../../src/runner/group.js';
import { SCHEDULER_STOP, timeLimitReason } from '../../src/runner/reasons.js';
import { assertTasks, failed, killed, LOG_MODES, ok, runEnds } from './runner-ends.js';
import { assertNothingLeft, logOf, type Rec, type RunSpec, runWith, want } from './runner-harness.js';
import { RUNNERS } from './runners.js';

/**
 * The runner conformance suite: the same scenarios against every runner drover has (runners.ts) — the
 * TypeScript runner with each of its process starters, the Perl single-task runner, the bash element runner
 * with one task per element and packed, the Python element runner — on real processes. Every runner must write
 * the same records (times, pids, hosts and slots aside) and the same logs: the exit-status table of
 * src/runner/end-state.ts, the reasons of src/runner/reasons.ts, the DROVER_* environment. A runner that cannot
 * serve a scenario (retries and time limits are the TypeScript and Perl runners' alone) is not run on it: its
 * launches go to one that can.
 */

/**
 * The settings of the stop scenarios: one slot, and a kill grace far longer than the scenario may take. A task
 * that ends at its SIGTERM ends its SIGKILL timer too: a timer left to run out (a runner's child holding the
 * runner's stderr, the launch's variables in its environment) would outlive the runner by the whole grace.
 */
const STOPPED: Partial<RunSettings> = { maxTasks: 1, killGrace: 30 };

/** A task that takes a second to end at SIGTERM (the runner's SIGKILL timer is running by then), as 143. */
const SLOW_TO_STOP = "trap 'sleep 1; exit 143' TERM; sleep 30 & wait";

/** SIGTERM to every runner process once `tasks` have started: what a scheduler does to stop an element. */
function stopWhenStarted(tasks: number[], cancel?: number[]): RunSpec['during'] {
  return async (run) => {
    await run.started(tasks);
    if (cancel) run.requestCancel(cancel);
    for (const p of run.processes()) p.kill('SIGTERM');
  };
}

for (const impl of RUNNERS) {
  describe(impl.name, { skip: impl.skip }, () => {
    for (const logs of LOG_MODES) {
      test(`every row of the exit-status table, logs (${logs}), the DROVER_* environment, the process group`, async (t) => {
        await runEnds(t, impl, logs);
      });

      test(`programs that cannot be executed, many in a row (${logs}): each attempt ends after it started`, async (t) => {
        // A starter gathers its reports for a moment: a runner that stamped the start of an attempt that never
        // ran with its own clock, when it heard of it, put that start after the end the starter stamped.
        const commands = Array.from({ length: 40 }, (_, i) =>
          i % 2 ? './not-executable' : 'drover-no-such-program',
        );
        const o = await runWith(t, impl, { commands, parallel: 4, logs });
        const end = (c: string) => failed(c.startsWith('.') ? 126 : 127);
        assertTasks(
          o,
          Object.fromEntries(commands.map((c, i) => [i + 1, want.attempt(o.launch, i + 1, 1, end(c))])),
        );
      });

      test(`a process a task left outside its group writes after the task ended (${logs}): not into the next task's log`, async (t) => {
        // Task 1 leaves a process in a session of its own (as a daemon does), which writes a result-like line once
        // task 1's end is recorded (its pipes cut: bytes before the cut are task 1's) while task 2 runs in the
        // same slot. What it writes is no later attempt's. (Task 1 ends only once that process has its own
        // session: before, it is still in task 1's group.)
        const late = `(setsid sh -c ': > left; until [ -e go ]; do sleep 0.01; done; echo "{\\"loss\\": 999}"; echo late >&2' &); until [ -e left ]; do sleep 0.01; done; echo one; echo one >&2`;
        const o = await runWith(t, impl, {
          commands: [late, 'sleep 1.5; echo two; echo two >&2'],
          settings: { maxTasks: 1 },
          logs,
          during: async (run) => {
            await run.ended([1]);
            fs.writeFileSync(path.join(run.launch.dir, 'go'), '');
          },
        });
        assertTasks(o, { 1: want.attempt(o.launch, 1, 1, ok), 2: want.attempt(o.launch, 2, 1, ok) });
        const sliced = o.raw.some((r) => r.type === 'start' && r.task === 1 && r.seq !== undefined);
        for (const ext of ['out', 'err'] as const) {
          assert.equal(logOf(o, 2, ext), 'two\n', `task 2's ${ext}`);
          // A file of its own may take the late bytes (they are task 1's); a slice of a segment never does.
          if (sliced) assert.equal(logOf(o, 1, ext), 'one\n', `task 1's ${ext}`);
          else assert.match(logOf(o, 1, ext), /^one\n/, `task 1's ${ext}`);
        }
        assertNothingLeft(o);
      });

      test(`output larger than a pipe holds, and an output closed early (${logs}): each log whole`, async (t) => {
        const o = await runWith(t, impl, {
          commands: [
            'yes 0123456789 | head -c 3000000; yes abc | head -c 2000000 >&2; echo end',
            'echo before; exec >&-; sleep 0.3; echo after >&2',
          ],
          logs,
        });
        assertTasks(o, { 1: want.attempt(o.launch, 1, 1, ok), 2: want.attempt(o.launch, 2, 1, ok) });
        assert.equal(logOf(o, 1, 'out'), `${'0123456789\n'.repeat(272728).slice(0, 3000000)}end\n`);
        assert.equal(logOf(o, 1, 'err'), 'abc\n'.repeat(500000));
        assert.equal(logOf(o, 2, 'out'), 'before\n');
        assert.equal(logOf(o, 2, 'err'), 'after\n');
      });
    }

    test('exit 128+N is signal N for every signal the table names; other codes stay exit codes', async (t) => {
      const codes = [...SIGNAL_NAMES.map((_, i) => 129 + i), 128, 160, 255];
      const o = await runWith(t, impl, { commands: codes.map((c) => `exit ${c}`), parallel: 4 });
      const end = (c: number) => (c > 128 && c < 160 ? killed(`SIG${SIGNAL_NAMES[c - 129]}`) : failed(c));
      assertTasks(
        o,
        Object.fromEntries(codes.map((c, i) => [i + 1, want.attempt(o.launch, i + 1, 1, end(c))])),
      );
    });

    test('a cancel request there before the runner starts: the task never starts, recorded cancelled', async (t) => {
      const o = await runWith(t, impl, { commands: ['echo one', 'echo two'], cancelFirst: [2] });
      assertTasks(o, { 1: want.attempt(o.launch, 1, 1, ok), 2: want.skip(2) });
      assert.equal(logOf(o, 1, 'out'), 'one\n');
    });

    test('SIGTERM (the scheduler stops the element): the task is stopped and recorded killed, scheduler stop', async (t) => {
      const t0 = Date.now();
      const commands = impl.packs ? [SLOW_TO_STOP, 'true'] : [SLOW_TO_STOP];
      const o = await runWith(t, impl, { commands, settings: STOPPED, during: stopWhenStarted([1]) });
      assert.ok(Date.now() - t0 < 10_000, 'sleep 30 was stopped, and nothing waited out the kill grace');
      const end = { ...killed('SIGTERM'), reason: SCHEDULER_STOP };
      // A task that never started gets no record: reconciliation with the scheduler says what became of it.
      assertTasks(o, { 1: want.attempt(o.launch, 1, 1, end), 2: undefined });
      assert.deepEqual([...o.ends.values()], ['cancelled']);
      assert.deepEqual([...o.exits.values()], [1]);
      assertNothingLeft(o);
    });

    test('drover cancel on a cluster (a cancel request, then SIGTERM): recorded cancelled', async (t) => {
      const commands = impl.packs ? [SLOW_TO_STOP, 'sleep 30'] : [SLOW_TO_STOP];
      const cancel = impl.packs ? [1, 2] : [1];
      const during = stopWhenStarted([1], cancel);
      const t0 = Date.now();
      const o = await runWith(t, impl, { commands, settings: STOPPED, during });
      assert.ok(Date.now() - t0 < 10_000, 'sleep 30 was stopped, and nothing waited out the kill grace');
      const end = { state: 'cancelled', exit_code: null, signal: 'SIGTERM' };
      assertTasks(o, { 1: want.attempt(o.launch, 1, 1, end), 2: impl.packs ? want.skip(2) : undefined });
      assert.deepEqual([...o.ends.values()], ['cancelled']);
      assertNothingLeft(o);
    });

    if (impl.polls) {
      test('a cancel request while it runs: the running task is stopped, the queued one skipped, the rest run', async (t) => {
        const o = await runWith(t, impl, {
          commands: ['sleep 30', 'sleep 30', 'echo three'],
          settings: { maxTasks: 1 },
          during: async (run) => {
            await run.started([1]);
            run.requestCancel([1, 2]);
          },
        });
        const end = { state: 'cancelled', exit_code: null, signal: 'SIGTERM' };
        assertTasks(o, {
          1: want.attempt(o.launch, 1, 1, end),
          2: want.skip(2),
          3: want.attempt(o.launch, 3, 1, ok),
        });
        assert.equal(logOf(o, 3, 'out'), 'three\n');
        assert.deepEqual([...o.ends.values()], ['done']);
        assertNothingLeft(o);
      });
    }

    if (impl.retries) {
      test('--task-timeout: SIGTERM at the limit, SIGKILL after the grace, recorded timeout with the limit', async (t) => {
        const t0 = Date.now();
        const o = await runWith(t, impl, {
          commands: ['sleep 30', "trap '' TERM; sleep 30"],
          settings: { taskTimeout: 1, killGrace: 0.5 },
        });
        const end = (signal: string) => ({ ...killed(signal), state: 'timeout', reason: timeLimitReason(1) });
        assertTasks(o, {
          1: want.attempt(o.launch, 1, 1, end('SIGTERM')),
          2: want.attempt(o.launch, 2, 1, end('SIGKILL')),
        });
        assert.ok(Date.now() - t0 < 10_000, 'both were stopped');
        assertNothingLeft(o);
      });

      test('a fractional limit and no grace: SIGKILL at once after SIGTERM', async (t) => {
        const o = await runWith(t, impl, {
          commands: ["trap '' TERM; sleep 30"],
          settings: { taskTimeout: 0.5, killGrace: 0 },
        });
        const end = { ...killed('SIGKILL'), state: 'timeout', reason: timeLimitReason(0.5) };
        assertTasks(o, { 1: want.attempt(o.launch, 1, 1, end) });
      });

      test('--retries: failed attempts are retried, numbered, each with its own logs, the last one not', async (t) => {
        const o = await runWith(t, impl, {
          commands: ['test "$DROVER_ATTEMPT" -ge 2', 'echo "$DROVER_ATTEMPT"; exit 4'],
          settings: { retries: 2 },
        });
        const retried = (e: Rec) => ({ ...e, retry: true });
        assertTasks(o, {
          1: [...want.attempt(o.launch, 1, 1, retried(failed(1))), ...want.attempt(o.launch, 1, 2, ok)],
          2: [
            ...want.attempt(o.launch, 2, 1, retried(failed(4))),
            ...want.attempt(o.launch, 2, 2, retried(failed(4))),
            ...want.attempt(o.launch, 2, 3, failed(4)),
          ],
        });
        for (const n of [1, 2, 3]) assert.equal(logOf(o, 2, 'out', n), `${n}\n`);
      });
    }

    if (impl.packs) {
      test('N slots at once, each with its own GPUs from those visible, tasks started in order', async (t) => {
        // Task N takes N tenths of a second, so a slot frees every tenth: a starter that took a later task before
        // an earlier one would start it a tenth sooner.
        const cmd = 'echo "$DROVER_TASK_ID $DROVER_SLOT $CUDA_VISIBLE_DEVICES"; sleep 0.$DROVER_TASK_ID';
        const o = await runWith(t, impl, {
          commands: Array(6).fill(cmd),
          settings: { maxTasks: 3, gpusPerTask: 1 },
          env: { CUDA_VISIBLE_DEVICES: '4,5,6,7' },
        });
        // In order by the time each started (stamped when its slot took it): slots in processes of their own
        // report near-simultaneous starts in whichever order their writes land.
        const starts = o.raw
          .filter((r) => r.type === 'start')
          .sort((a, b) => (a.task as number) - (b.task as number));
        assert.deepEqual(
          starts.map((r) => r.task),
          [1, 2, 3, 4, 5, 6],
        );
        for (let i = 1; i < starts.length; i++)
          assert.ok(
            (starts[i]!.at as number) >= (starts[i - 1]!.at as number),
            `task ${i + 1} started before task ${i}`,
          );
        for (const r of starts) {
          assert.equal(r.gpus, String(4 + (r.slot as number)));
          assert.equal(logOf(o, r.task as number, 'out'), `${r.task} ${r.slot} ${r.gpus}\n`);
        }
        let running = 0;
        let most = 0;
        for (const r of o.raw.filter((x) => x.type === 'start' || x.type === 'end')) {
          running += r.type === 'start' ? 1 : -1;
          most = Math.max(most, running);
        }
        assert.equal(most, 3);
        assert.equal(o.raw.find((r) => r.type === 'runner')!.slots, 3);
        assert.ok(o.raw.filter((r) => r.type === 'end').every((r) => r.state === 'succeeded'));
      });

      test('fewer GPUs visible than a task needs: exit 2 before any record', async (t) => {
        const o = await runWith(t, impl, {
          commands: ['true', 'true'],
          settings: { maxTasks: 2, gpusPerTask: 2 },
          env: { CUDA_VISIBLE_DEVICES: '0' },
        });
        assert.deepEqual([...o.exits.values()], [2]);
        assert.deepEqual(o.raw, []);
      });
    }
  });
}
