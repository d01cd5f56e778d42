import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import type { Slot } from '../../src/runner/slots.js';
import { ForkServerStarter, findPython, perlAvailable } from '../../src/runner/starters/fork-server.js';
import { NodeSpawnStarter } from '../../src/runner/starters/node-spawn.js';
import type {
  Execution,
  ProcessExit,
  ProcessStart,
  ProcessStarter,
} from '../../src/runner/starters/starter.js';
import { pidIn, tempWorkspace } from '../helpers/workspace.js';

/**
 * The starter contract, on real processes, for each way drover starts tasks: the Python spawn server
 * (posix_spawn), the Perl fork server and Node's spawn. The runner may use any of them (DROVER_SPAWNER, or
 * whichever the machine has), so each must start, log, place and report tasks the same way.
 */
const KINDS = ['python', 'perl', 'node'] as const;
type Kind = (typeof KINDS)[number];

function slots(n: number): Slot[] {
  return Array.from({ length: n }, (_, i) => ({ index: i, gpus: [] }));
}

function makeExecutor(
  kind: Kind,
  n: number,
  cwd: string,
  env: NodeJS.ProcessEnv = process.env,
): ProcessStarter {
  if (kind === 'node') return new NodeSpawnStarter(slots(n), env);
  if (kind === 'perl') return new ForkServerStarter(slots(n), env, cwd);
  return new ForkServerStarter(slots(n), env, cwd, { kind: 'python', interpreter: findPython()! });
}

function available(kind: Kind): boolean {
  if (kind === 'python') return findPython() !== null;
  if (kind === 'perl') return perlAvailable();
  return true;
}

interface Ran {
  started: ProcessStart | null;
  /** How it ended, without the time. */
  exit: ProcessExit | null;
  ended: ProcessExit | null;
  out: string;
  err: string;
}

async function settle(e: Execution, out: string, err: string): Promise<Ran> {
  const started = await e.started;
  const exited = await e.exited;
  const exit = exited && { exitCode: exited.exitCode, signal: exited.signal };
  const read = (f: string) => (fs.existsSync(f) ? fs.readFileSync(f, 'utf8') : '');
  return { started, exit, ended: exited, out: read(out), err: read(err) };
}

/** Run one task alone and wait for its end. */
async function runOne(
  kind: Kind,
  dir: string,
  argv: string[],
  opts: { taskEnv?: Record<string, string>; cwd?: string; env?: NodeJS.ProcessEnv; logDir?: string } = {},
): Promise<Ran> {
  const ex = makeExecutor(kind, 1, dir, opts.env);
  const logDir = opts.logDir ?? dir;
  const out = path.join(logDir, 'task.out');
  const err = path.join(logDir, 'task.err');
  try {
    const e = ex.submit({ argv, taskEnv: opts.taskEnv ?? {}, cwd: opts.cwd ?? dir, logs: { out, err } });
    return await settle(e, out, err);
  } finally {
    ex.close();
  }
}

for (const kind of KINDS) {
  describe(`process starter: ${kind}`, {
    skip: available(kind) ? false : `no ${kind} on this machine`,
  }, () => {
    test('stdout and stderr go to the task’s log files and the exit code comes back', async (t) => {
      const dir = tempWorkspace(t);
      const before = Date.now() / 1000;
      const r = await runOne(kind, dir, ['sh', '-c', 'echo to-out; echo to-err >&2; sleep 0.2; exit 3']);
      const after = Date.now() / 1000;
      assert.ok(r.started && r.started.pid > 0);
      if (kind !== 'node') {
        // The servers say when a task started and ended, so records do not carry their batching delay.
        const { at: s } = r.started;
        const e = r.ended!.at;
        assert.ok(s !== undefined && e !== undefined, 'start and end times reported');
        assert.ok(before - 0.01 <= s && s <= e && e <= after + 0.01, `${before} <= ${s} <= ${e} <= ${after}`);
        assert.ok(e - s >= 0.19, `the task ran 0.2 s, reported ${e - s}`);
      }
      assert.deepEqual(r.exit, { exitCode: 3, signal: null });
      assert.equal(r.out, 'to-out\n');
      assert.equal(r.err, 'to-err\n');
    });

    test('a task killed by a signal reports the signal', async (t) => {
      const dir = tempWorkspace(t);
      const r = await runOne(kind, dir, ['sh', '-c', 'kill -9 $$']);
      assert.deepEqual(r.exit, { exitCode: null, signal: 9 });
    });

    test('each task leads its own process group, with stdin from /dev/null', async (t) => {
      const dir = tempWorkspace(t);
      const r = await runOne(kind, dir, [
        'sh',
        '-c',
        'echo $$; cut -d" " -f5 /proc/$$/stat; cat; echo stdin-done',
      ]);
      const [pid, pgid, last] = r.out.trim().split('\n');
      assert.equal(Number(pid), r.started!.pid);
      assert.equal(pgid, pid, 'the task is the leader of its process group');
      assert.equal(last, 'stdin-done', 'reading stdin ends at once');
    });

    test('the task sees the shared environment, its slot’s and its own variables', async (t) => {
      const dir = tempWorkspace(t);
      const r = await runOne(kind, dir, ['sh', '-c', 'echo "$SHARED_X $DROVER_SLOT $OWN_Y"'], {
        env: { ...process.env, SHARED_X: 'shared' },
        taskEnv: { OWN_Y: 'own' },
      });
      assert.equal(r.out, 'shared 0 own\n');
    });

    test('SIGINT, SIGTERM and SIGPIPE are at their defaults in the task', async (t) => {
      const dir = tempWorkspace(t);
      // SigIgn in /proc/self/status: a mask of ignored signals (INT is bit 1, PIPE bit 12, TERM bit 14).
      const r = await runOne(kind, dir, ['sh', '-c', "grep '^SigIgn' /proc/$$/status"]);
      const mask = BigInt(`0x${r.out.trim().split(/\s+/)[1]}`);
      for (const sig of [2, 13, 15])
        assert.equal((mask >> BigInt(sig - 1)) & 1n, 0n, `signal ${sig} ignored`);
    });

    test('a program that is not there ends 127 with the reason in its stderr log', async (t) => {
      const dir = tempWorkspace(t);
      const r = await runOne(kind, dir, ['drover-no-such-program-x', 'a']);
      assert.deepEqual(r.exit, { exitCode: 127, signal: null });
      assert.match(r.err, /drover-no-such-program-x/);
    });

    test('a file that cannot be executed ends 126', async (t) => {
      const dir = tempWorkspace(t);
      const file = path.join(dir, 'not-executable');
      fs.writeFileSync(file, 'echo hi\n', { mode: 0o644 });
      const r = await runOne(kind, dir, [file]);
      assert.deepEqual(r.exit, { exitCode: 126, signal: null });
    });

    test('a script without a #! line runs with sh, as in a shell', async (t) => {
      const dir = tempWorkspace(t);
      const file = path.join(dir, 'script');
      fs.writeFileSync(file, 'echo "ran with $1"\n', { mode: 0o755 });
      const r = await runOne(kind, dir, [file, 'arg']);
      assert.deepEqual(r.exit, { exitCode: 0, signal: null });
      assert.equal(r.out, 'ran with arg\n');
    });

    test('a task runs in its own folder, also when it is not the starter’s', async (t) => {
      const dir = tempWorkspace(t);
      const other = path.join(dir, 'other');
      fs.mkdirSync(other);
      const r = await runOne(kind, dir, ['pwd'], { cwd: other });
      assert.deepEqual(r.exit, { exitCode: 0, signal: null });
      assert.equal(r.out, `${other}\n`);
    });

    test('a log folder that cannot be written ends the task 126 and nothing else breaks', async (t) => {
      const dir = tempWorkspace(t);
      const r = await runOne(kind, dir, ['true'], { logDir: path.join(dir, 'missing') });
      assert.equal(r.exit?.exitCode, 126);
      const again = await runOne(kind, dir, ['true']);
      assert.deepEqual(again.exit, { exitCode: 0, signal: null });
    });

    test('no more tasks run at once than there are slots, and they start in submission order', async (t) => {
      const dir = tempWorkspace(t);
      const ex = makeExecutor(kind, 2, dir);
      t.after(() => ex.close());
      const log = path.join(dir, 'log');
      // Task i takes 0.i s, so a slot frees every tenth of a second: a starter that took a later task before an
      // earlier one would start it sooner.
      const script = `echo "start $0 $(date +%s%N)" >> ${log}; sleep 0.$0; echo "end $0 $(date +%s%N)" >> ${log}`;
      const heard: number[] = [];
      const runs = [1, 2, 3, 4, 5, 6].map((i) => {
        const out = path.join(dir, `${i}.out`);
        const err = path.join(dir, `${i}.err`);
        const e = ex.submit({
          argv: ['sh', '-c', script, String(i)],
          taskEnv: {},
          cwd: dir,
          logs: { out, err },
        });
        e.started.then(() => {
          heard[i - 1] = Date.now() / 1000;
        });
        return settle(e, out, err);
      });
      const results = await Promise.all(runs);
      assert.ok(results.every((r) => r.exit?.exitCode === 0));
      const events = fs
        .readFileSync(log, 'utf8')
        .trim()
        .split('\n')
        .map((l) => l.split(' '))
        .map(([what, id, at]) => ({ what: what!, id: Number(id), at: BigInt(at!) }))
        .sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
      let running = 0;
      let most = 0;
      for (const e of events) {
        running += e.what === 'start' ? 1 : -1;
        most = Math.max(most, running);
      }
      assert.equal(most, 2);
      // In submission order by the time each started: the starter's stamp (taken when the slot took the task), or
      // when the runner heard of it. Slots in processes of their own report near-simultaneous starts in whichever
      // order their writes land, so the order of the reports alone says nothing.
      const at = results.map((r, i) => r.started!.at ?? heard[i]!);
      for (let i = 1; i < at.length; i++)
        assert.ok(at[i]! >= at[i - 1]!, `task ${i + 1} started before task ${i}`);
      const usedSlots = new Set(results.map((r) => r.started!.slot));
      assert.deepEqual([...usedSlots].sort(), [0, 1]);
    });

    test('tasks each larger than a pipe holds (64 KiB) reach their processes whole and in their own slots', async (t) => {
      const dir = tempWorkspace(t);
      const ex = makeExecutor(kind, 2, dir);
      t.after(() => ex.close());
      // Three arguments of 100,000 bytes (one may be at most 128 KiB) and a variable as large, each task its own letter.
      // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansions, not a template
      const script = 'echo "$((${#1} + ${#2} + ${#3})) ${#BIG} $(printf %.1s "$1$BIG")"';
      const runs = [0, 1, 2, 3, 4].map((i) => {
        const big = String.fromCharCode(97 + i).repeat(100_000);
        const out = path.join(dir, `${i}.out`);
        const err = path.join(dir, `${i}.err`);
        const e = ex.submit({
          argv: ['sh', '-c', script, 'sh', big, big, big],
          taskEnv: { BIG: big },
          cwd: dir,
          logs: { out, err },
        });
        return settle(e, out, err);
      });
      const results = await Promise.all(runs);
      assert.deepEqual(
        results.map((r) => [r.exit?.exitCode, r.out]),
        [0, 1, 2, 3, 4].map((i) => [0, `300000 100000 ${String.fromCharCode(97 + i)}\n`]),
      );
    });

    test('a task withdrawn before it starts never runs; one that started is not withdrawn', async (t) => {
      const dir = tempWorkspace(t);
      const ex = makeExecutor(kind, 1, dir);
      const req = (name: string, argv: string[]) => ({
        argv,
        taskEnv: {},
        cwd: dir,
        logs: { out: path.join(dir, `${name}.out`), err: path.join(dir, `${name}.err`) },
      });
      t.after(() => ex.close());
      const first = ex.submit(req('first', ['sleep', '0.5']));
      const second = ex.submit(req('second', ['sh', '-c', 'echo ran']));
      const third = ex.submit(req('third', ['true']));
      await first.started;
      ex.withdraw(second);
      ex.withdraw(first);
      // Answered at once, not when a slot frees to take it: the runner waits for it to record the task cancelled.
      assert.equal(
        await Promise.race([
          second.started.then(() => 'withdrawn'),
          first.exited.then(() => 'the first ended'),
        ]),
        'withdrawn',
      );
      assert.equal(await second.started, null);
      assert.equal(await second.exited, null);
      assert.equal((await first.exited)?.exitCode, 0);
      assert.equal((await third.exited)?.exitCode, 0);
      assert.equal(fs.existsSync(path.join(dir, 'second.out')), false);
    });

    if (kind !== 'node') {
      test('when the runner dies, the server stops the tasks it started', async (t) => {
        const dir = tempWorkspace(t);
        const pidFile = path.join(dir, 'task.pid');
        const src = pathToFileURL(
          path.resolve(import.meta.dirname, '../../src/runner/starters/fork-server.js'),
        ).href;
        const program = `
          import { ForkServerStarter, findPython } from ${JSON.stringify(src)};
          const server = ${kind === 'python' ? "{ kind: 'python', interpreter: findPython() }" : 'undefined'};
          const ex = new ForkServerStarter([{ index: 0, gpus: [] }], process.env, ${JSON.stringify(dir)}, server);
          ex.submit({ argv: ['sh', '-c', 'echo $$ > ${pidFile}; exec sleep 60'], taskEnv: {}, cwd: ${JSON.stringify(dir)},
            logs: { out: ${JSON.stringify(path.join(dir, 'o'))}, err: ${JSON.stringify(path.join(dir, 'e'))} } });
          setInterval(() => {}, 1000);
        `;
        const runner = spawn(process.execPath, ['--input-type=module', '-e', program], { stdio: 'ignore' });
        let taskPid: number | undefined;
        for (let i = 0; i < 100 && taskPid === undefined; i++) {
          await sleep(100);
          taskPid = pidIn(pidFile);
        }
        assert.ok(taskPid !== undefined, 'the task started');
        runner.kill('SIGKILL');
        let alive = true;
        for (let i = 0; i < 80 && alive; i++) {
          await sleep(100);
          try {
            process.kill(taskPid, 0);
          } catch {
            alive = false;
          }
        }
        assert.equal(alive, false, 'the task was stopped within 8 s of its runner’s death');
      });
    }
  });
}
