import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import os from 'node:os';
import { FORKSERVER_PERL } from './forkserver-source.js';
import type { Slot } from './slots.js';
import { type Execution, type Executor, type ProcessExit, slotEnv, type TaskRequest } from './spawner.js';

/** True when a Perl interpreter is on PATH (it is on every Debian/Ubuntu; most clusters have one). */
export function perlAvailable(): boolean {
  return spawnSync('perl', ['-e', 'exit 0'], { stdio: 'ignore' }).status === 0;
}

interface Pending {
  started: boolean;
  resolveStarted(v: { pid: number; slot: number } | null): void;
  resolveExit(v: ProcessExit | null): void;
}

const SIGNAL_NAMES = Object.fromEntries(
  Object.entries(os.constants.signals).map(([name, n]) => [n, name]),
) as Record<number, NodeJS.Signals>;

/**
 * Starts task processes through the Perl fork server (forkserver-source.ts), which holds the queue and the
 * slots: the runner's main thread only writes one message and reads two short lines per task.
 */
export class ForkServer implements Executor {
  private readonly child: ChildProcess;
  private readonly pending = new Map<number, Pending>();
  private readonly ids = new WeakMap<Execution, number>();
  private nextId = 1;
  private rest = '';

  constructor(slots: readonly Slot[], baseEnv: NodeJS.ProcessEnv, cwd: string) {
    this.child = spawn('perl', ['-e', FORKSERVER_PERL], { stdio: ['pipe', 'pipe', 'inherit'], cwd });
    this.child.stdout!.setEncoding('utf8');
    this.child.stdout!.on('data', (chunk: string) => this.onData(chunk));
    this.child.on('exit', () => {
      // The server died (it should not): everything it had is over.
      for (const p of this.pending.values()) {
        p.resolveStarted(null);
        p.resolveExit({ exitCode: null, signal: 'SIGKILL' });
      }
      this.pending.clear();
    });
    this.send(['E', ...envPairs(baseEnv)]);
    for (const slot of slots) this.send(['L', String(slot.index), ...envPairs(slotEnv(slot))]);
  }

  submit(req: TaskRequest): Execution {
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
    this.send([
      'S',
      String(id),
      req.cwd,
      req.out,
      req.err,
      String(req.argv.length),
      ...req.argv,
      String(env.length),
      ...env,
    ]);
    return e;
  }

  withdraw(e: Execution): void {
    const id = this.ids.get(e);
    if (id !== undefined && this.pending.get(id)?.started === false) this.send(['W', String(id)]);
  }

  close(): void {
    this.child.stdin!.end();
  }

  private send(fields: string[]): void {
    const payload = Buffer.from(`${fields.join('\0')}\0`);
    this.child.stdin!.write(Buffer.concat([Buffer.from(`${payload.length}\n`), payload]));
  }

  private onData(chunk: string): void {
    this.rest += chunk;
    let nl = this.rest.indexOf('\n');
    while (nl >= 0) {
      const [kind, idText, a, b] = this.rest.slice(0, nl).split('\t');
      this.rest = this.rest.slice(nl + 1);
      nl = this.rest.indexOf('\n');
      const id = Number(idText);
      const p = this.pending.get(id);
      if (!p) continue;
      if (kind === 'S') {
        p.started = true;
        p.resolveStarted(Number(a) > 0 ? { pid: Number(a), slot: Number(b) } : null);
      } else if (kind === 'E') {
        this.pending.delete(id);
        const status = Number(a);
        const sig = status & 0x7f;
        p.resolveExit(
          sig === 0
            ? { exitCode: status >> 8, signal: null }
            : { exitCode: null, signal: SIGNAL_NAMES[sig] ?? 'SIGKILL' },
        );
      } else if (kind === 'X') {
        this.pending.delete(id);
        p.resolveStarted(null);
        p.resolveExit(null);
      }
    }
  }
}

function envPairs(env: NodeJS.ProcessEnv | Record<string, string>): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(env))
    if (v !== undefined && !k.includes('\0') && !v.includes('\0')) out.push(`${k}=${v}`);
  return out;
}
