import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isSameProcess } from '../../util/proc.js';
import { programText } from '../programs.js';
import type { Slot } from '../slots.js';
import {
  type Execution,
  limitPair,
  type ProcessExit,
  type ProcessStart,
  type ProcessStarter,
  type SegmentSpan,
  slotEnv,
  type TaskRequest,
} from './starter.js';

/** True when a Perl interpreter is on PATH (it is on every Debian/Ubuntu; most clusters have one). */
export function perlAvailable(): boolean {
  return spawnSync('perl', ['-e', 'exit 0'], { stdio: 'ignore' }).status === 0;
}

/** The interpreters a fork server can run in, fastest first. */
export type ServerKind = 'python' | 'perl';

/** Python 3.8+ with os.posix_spawn: the system's first (a PATH shim such as pyenv's costs ~100 ms a start). */
const PYTHON_CANDIDATES = ['/usr/bin/python3', '/usr/local/bin/python3', 'python3'];
const PYTHON_CHECK =
  'import os,sys; sys.exit(0 if sys.version_info >= (3, 8) and hasattr(os, "posix_spawn") else 3)';
let pythonFound: string | null | undefined;

/**
 * True when `candidate` is an executable file named for its version, `python3.N` with N >= 8 (as the system's
 * `python3` links to): every CPython 3.8+ on Linux has os.posix_spawn, so that name says what running the check
 * would, without a Python start (~11 ms of CPU and 20 of wall here; every runner and worker looks once).
 */
export function namedRecentPython(candidate: string): boolean {
  if (!path.isAbsolute(candidate)) return false;
  try {
    const real = fs.realpathSync(candidate);
    const minor = /^python3\.(\d+)$/.exec(path.basename(real))?.[1];
    if (minor === undefined || Number(minor) < 8) return false;
    fs.accessSync(real, fs.constants.X_OK);
    return fs.statSync(real).isFile();
  } catch {
    return false;
  }
}

/** A Python that can run the spawn server (programs/spawn-server.py), or null; looked for once per process. */
export function findPython(): string | null {
  if (pythonFound !== undefined) return pythonFound;
  pythonFound = null;
  for (const candidate of PYTHON_CANDIDATES) {
    if (namedRecentPython(candidate)) {
      pythonFound = candidate;
      break;
    }
    const r = spawnSync(candidate, ['-I', '-S', '-c', PYTHON_CHECK], { stdio: 'ignore' });
    if (r.status === 0) {
      pythonFound = candidate;
      break;
    }
  }
  return pythonFound;
}

interface Pending {
  started: boolean;
  /** The task's process, once started: its pid and the time the server reported the start. */
  pid?: number;
  at?: number;
  /** The slot the server reported for a task it could not start (pid 0). */
  slot?: number;
  resolveStarted(v: ProcessStart | null): void;
  resolveExit(v: ProcessExit | null): void;
}

/**
 * Starts task processes through a fork server, which holds the queue and the slots: the runner's main thread
 * only writes one message and reads two short lines per task. The server is the Python one (posix_spawn,
 * programs/spawn-server.py) or the Perl one (fork, programs/fork-server.pl); both speak the protocol that
 * fork-server.pl describes. Their text comes from the bundle (programs.ts): nothing is read from disk.
 */
export class ForkServerStarter implements ProcessStarter {
  private readonly child: ChildProcess;
  private readonly pending = new Map<number, Pending>();
  private readonly ids = new WeakMap<Execution, number>();
  private nextId = 1;
  private rest = '';
  private readonly outgoing: Buffer[] = [];
  private closed = false;
  /** The server has died: nothing more can start. */
  private dead = false;

  constructor(
    slots: readonly Slot[],
    baseEnv: NodeJS.ProcessEnv,
    cwd: string,
    server: { kind: ServerKind; interpreter: string } = { kind: 'perl', interpreter: 'perl' },
    killGrace = 5,
  ) {
    const args =
      server.kind === 'python'
        ? ['-I', '-S', '-c', programText('spawn-server.py'), programText('drover_common.py')]
        : ['-e', programText('fork-server.pl')];
    // In its own session (detached): whatever kills the runner's process group leaves the server to stop the
    // tasks when its input ends.
    this.child = spawn(server.interpreter, args, { stdio: ['pipe', 'pipe', 'inherit'], cwd, detached: true });
    this.child.stdout!.setEncoding('utf8');
    this.child.stdout!.on('data', (chunk: string) => this.onData(chunk));
    this.child.on('exit', () => {
      this.dead = true;
      void this.serverDied();
    });
    this.send(['E', ...envPairs(baseEnv)]);
    this.send(['G', String(killGrace)]);
    for (const slot of slots) this.send(['L', String(slot.index), ...envPairs(slotEnv(slot))]);
  }

  /**
   * The server died (it should not: killed by hand, or by an out-of-memory killer). Its tasks run on without it,
   * and nothing would reap or stop them: the runner stops each by its pid (checked against its start, so a reused
   * pid is never hit) and waits for it to be gone before it says so — `lost`, as no one can know how it would
   * have ended (SERVER_LOST). Tasks it had not started never start: withdrawn, as are all submitted later.
   */
  private async serverDied(): Promise<void> {
    const pending = [...this.pending.values()];
    this.pending.clear();
    const running = pending.filter((p) => p.pid !== undefined && isSameProcess(p.pid, p.at!));
    for (const p of running) {
      for (const target of [-p.pid!, p.pid!]) {
        try {
          process.kill(target, 'SIGKILL');
        } catch {
          // gone already
        }
      }
    }
    const deadline = Date.now() + 10_000;
    while (running.some((p) => isSameProcess(p.pid!, p.at!)) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    for (const p of pending) {
      if (p.pid === undefined) {
        p.resolveStarted(null);
        p.resolveExit(null);
      } else p.resolveExit({ exitCode: null, signal: null, serverLost: true });
    }
  }

  submit(req: TaskRequest): Execution {
    if (this.dead) return { started: Promise.resolve(null), exited: Promise.resolve(null) };
    const id = this.nextId++;
    let resolveStarted!: Pending['resolveStarted'];
    let resolveExit!: Pending['resolveExit'];
    const e: Execution = {
      started: new Promise((r) => {
        resolveStarted = r;
      }),
      exited: new Promise((r) => {
        resolveExit = r;
      }),
    };
    this.pending.set(id, { started: false, resolveStarted, resolveExit });
    this.ids.set(e, id);
    const env = envPairs(req.taskEnv);
    if (req.limit) env.push(limitPair(req.limit));
    const logs = 'segments' in req.logs ? ['T', req.logs.segments] : ['S', req.logs.out, req.logs.err];
    this.send([
      logs[0]!,
      String(id),
      req.cwd,
      ...logs.slice(1),
      String(req.argv.length),
      ...req.argv,
      String(env.length),
      ...env,
    ]);
    return e;
  }

  withdraw(e: Execution): void {
    const id = this.ids.get(e);
    if (id === undefined || this.pending.get(id)?.started !== false) return;
    this.send(['W', String(id)]);
    // Now, not at the end of the turn: the runner stops running tasks right after withdrawing queued ones,
    // and the server must read the withdrawal before a stopped task's slot can start the next task.
    this.flush();
  }

  signal(e: Execution, signal: NodeJS.Signals): void {
    const id = this.ids.get(e);
    if (id === undefined || this.pending.get(id)?.started !== true) return;
    this.send(['K', String(id), String(os.constants.signals[signal])]);
  }

  abort(): void {
    this.send(['A']);
    this.flush();
  }

  close(): void {
    if (this.closed) return;
    this.flush();
    this.closed = true;
    this.child.stdin!.end();
  }

  /** Queue a message; the messages of one turn of the event loop go out in one write. */
  private send(fields: string[]): void {
    const payload = Buffer.from(`${fields.join('\0')}\0`);
    this.outgoing.push(Buffer.from(`${payload.length}\n`), payload);
    if (this.outgoing.length === 2) process.nextTick(() => this.flush());
  }

  private flush(): void {
    if (this.outgoing.length === 0 || this.closed || this.dead) return;
    this.child.stdin!.write(Buffer.concat(this.outgoing));
    this.outgoing.length = 0;
  }

  private onData(chunk: string): void {
    this.rest += chunk;
    let nl = this.rest.indexOf('\n');
    while (nl >= 0) {
      const [kind, idText, a, b, c, ...span] = this.rest.slice(0, nl).split('\t');
      this.rest = this.rest.slice(nl + 1);
      nl = this.rest.indexOf('\n');
      const id = Number(idText);
      const p = this.pending.get(id);
      if (!p) continue;
      if (kind === 'S') {
        p.started = true;
        if (Number(a) > 0) {
          p.pid = Number(a);
          p.at = stamp(c).at ?? Date.now() / 1000;
          p.resolveStarted({ pid: p.pid, slot: Number(b), ...stamp(c), ...segmentOf(span) });
        } else {
          // It could not be started: the server's time of the try is the attempt's start, on its clock.
          p.slot = Number(b);
          p.at = stamp(c).at;
          p.resolveStarted(null);
        }
      } else if (kind === 'E') {
        this.pending.delete(id);
        // The raw wait status: exit code << 8, or the number of the signal that ended it.
        const status = Number(a);
        const sig = status & 0x7f;
        p.resolveExit({
          exitCode: sig === 0 ? status >> 8 : null,
          signal: sig === 0 ? null : sig,
          ...stamp(b),
          ...segmentOf(c === undefined ? [] : [c, ...span]),
          ...(p.slot !== undefined ? { slot: p.slot } : {}),
          ...(p.pid === undefined && p.at !== undefined ? { triedAt: p.at } : {}),
        });
      } else if (kind === 'X') {
        this.pending.delete(id);
        p.resolveStarted(null);
        p.resolveExit(null);
      }
    }
  }
}

/** Where a task's output went in its segments, from a report's last fields (`seq off off [end end]`). */
function segmentOf(fields: readonly string[]): { segment?: SegmentSpan } {
  if (fields.length < 3) return {};
  const [seq, outOff, errOff, outEnd, errEnd] = fields.map(Number) as number[];
  const span: SegmentSpan = { seq: seq!, outOff: outOff!, errOff: errOff! };
  if (fields.length >= 5) {
    span.outEnd = outEnd!;
    span.errEnd = errEnd!;
  }
  return { segment: span };
}

/** The server's time of a report, when it sent one. */
function stamp(field: string | undefined): { at?: number } {
  const at = Number(field);
  return field && Number.isFinite(at) ? { at } : {};
}

function envPairs(env: NodeJS.ProcessEnv | Record<string, string>): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(env))
    if (v !== undefined && !k.includes('\0') && !v.includes('\0')) out.push(`${k}=${v}`);
  return out;
}
