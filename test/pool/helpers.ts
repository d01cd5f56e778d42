import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { runDrover, type Started, startDrover } from '../helpers/drover.js';
import { isAlive, killLeftovers, waitFor } from '../helpers/workspace.js';

/** Something with `after` hooks: a node:test TestContext. */
export interface HasAfter {
  after(fn: () => void | Promise<void>): void;
}

/** A `drover server` started by a test, and how to reach it. */
export interface TestServer {
  proc: Started;
  url: string;
  token: string;
  port: number;
}

/** Start `drover server` in `cwd` (fast heartbeats) and wait until it listens. */
export async function startServer(cwd: string, extra: string[] = [], port = 0): Promise<TestServer> {
  const info = path.join(cwd, '.drover', 'server', 'server.json');
  fs.rmSync(info, { force: true });
  const proc = startDrover(
    ['server', '--port', String(port), '--heartbeat', '0.3', '--lost-after', '4', ...extra],
    { cwd },
  );
  await waitFor('the server to listen', async () => {
    if (proc.child.exitCode !== null) throw new Error(`drover server exited: ${(await proc.result).stderr}`);
    return fs.existsSync(info);
  });
  const { url } = JSON.parse(fs.readFileSync(info, 'utf8')) as { url: string };
  const token = fs.readFileSync(path.join(cwd, '.drover', 'server', 'token'), 'utf8').trim();
  return { proc, url, token, port: Number(new URL(url).port) };
}

/** Pids of pool workers and the task processes they started, from the folder's ledger and worker records. */
function poolPids(cwd: string): { workers: number[]; tasks: number[] } {
  const workers: number[] = [];
  const tasks: number[] = [];
  const db = path.join(cwd, '.drover', 'ledger.db');
  if (fs.existsSync(db)) {
    const conn = new Database(db, { readonly: true, fileMustExist: true });
    try {
      for (const r of conn.prepare('SELECT handles FROM pools').all() as { handles: string }[]) {
        for (const h of JSON.parse(r.handles) as { pid?: number }[]) if (h.pid) workers.push(h.pid);
      }
      for (const r of conn.prepare('SELECT pid FROM pool_workers').all() as { pid: number }[])
        workers.push(r.pid);
    } catch {
      // no pool tables yet
    } finally {
      conn.close();
    }
  }
  const walk = (dir: string) => {
    for (const e of safeReaddir(dir)) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.jsonl')) {
        for (const line of fs.readFileSync(p, 'utf8').split('\n')) {
          try {
            const r = JSON.parse(line) as { type?: string; pid?: number };
            if (r.type === 'start' && r.pid) tasks.push(r.pid);
          } catch {
            // partial line
          }
        }
      }
    }
  };
  walk(path.join(cwd, '.drover', 'pools'));
  return { workers, tasks };
}

function safeReaddir(dir: string): fs.Dirent[] {
  try {
    return fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}

function cwdOf(pid: number): string | undefined {
  try {
    return fs.readlinkSync(`/proc/${pid}/cwd`);
  } catch {
    return undefined;
  }
}

/** Every attempt row of a job, in task and attempt order: task, attempt, state. */
export function attempts(cwd: string, job: string): { task_id: number; attempt: number; state: string }[] {
  const db = new Database(path.join(cwd, '.drover', 'ledger.db'), { readonly: true });
  try {
    return db
      .prepare(
        'SELECT task_id, attempt, state FROM attempts WHERE job_id = (SELECT id FROM jobs WHERE name = ?) ORDER BY task_id, attempt',
      )
      .all(job) as { task_id: number; attempt: number; state: string }[];
  } finally {
    db.close();
  }
}

/** True while some process of process group `pgid` is alive (zombies count as gone). */
export function groupAlive(pgid: number): boolean {
  // Group 0 is the kernel threads': a pid file read before it was written must not ask about it.
  if (!Number.isInteger(pgid) || pgid <= 0) throw new RangeError(`groupAlive: no process group ${pgid}`);
  for (const name of fs.readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue;
    }
    // pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses, so read after its last ')'.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(f[2]) === pgid && f[0] !== 'Z' && f[0] !== 'X') return true;
  }
  return false;
}

/** Kill what a test's pool left behind: its workers and their tasks, only processes working in `cwd`. */
export function killPool(cwd: string): void {
  const { workers, tasks } = poolPids(cwd);
  const mine = (pid: number) => {
    const c = cwdOf(pid);
    return c !== undefined && (c === cwd || c.startsWith(`${cwd}/`));
  };
  for (const pid of tasks) {
    if (mine(pid)) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
  }
  for (const pid of workers) {
    if (pid !== process.pid && mine(pid)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
  }
}

/** Kill every process still working inside `cwd` (started by the test: a worker's fork server, a task). */
export function killInside(cwd: string): number[] {
  const killed: number[] = [];
  for (const name of fs.readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    const c = cwdOf(pid);
    if (c !== undefined && (c === cwd || c.startsWith(`${cwd}/`)) && isAlive(pid)) {
      try {
        process.kill(pid, 'SIGKILL');
        killed.push(pid);
      } catch {
        // gone
      }
    }
  }
  return killed;
}

/** Live worker processes of the folder's pools. */
export function liveWorkers(cwd: string): number[] {
  return [...new Set(poolPids(cwd).workers)].filter((pid) => isAlive(pid) && cwdOf(pid)?.startsWith(cwd));
}

/**
 * A temp folder with a running server; after the test: pools down, the server stopped, and anything left
 * killed. The test fails if a worker or the server is still alive after a graceful shutdown had its chance.
 */
export async function poolWorkspace(
  t: HasAfter,
  extra: string[] = [],
  parent: string = os.tmpdir(),
): Promise<{ cwd: string; server: TestServer }> {
  const cwd = fs.realpathSync(fs.mkdtempSync(path.join(parent, 'drover-pool-test-')));
  const ctx = { cwd, server: await startServer(cwd, extra) };
  t.after(async () => {
    try {
      await teardown(ctx);
    } finally {
      await killLeftovers(cwd);
      // A killed worker's fork server stops its tasks and exits on its own within seconds; don't wait for it.
      killInside(cwd);
      if (process.env.DROVER_TEST_KEEP) process.stderr.write(`kept ${cwd}\n`);
      else fs.rmSync(cwd, { recursive: true, force: true });
    }
  });
  return ctx;
}

/** Scheduler array jobs the folder's pools submitted: only these are ever cancelled. */
export function clusterJobs(cwd: string): { kind: string; job: string }[] {
  const db = path.join(cwd, '.drover', 'ledger.db');
  if (!fs.existsSync(db)) return [];
  const conn = new Database(db, { readonly: true, fileMustExist: true });
  try {
    return (conn.prepare('SELECT handles FROM pools').all() as { handles: string }[]).flatMap((r) =>
      (JSON.parse(r.handles) as { kind: string; job?: string }[])
        .filter((h) => h.kind !== 'local' && h.job !== undefined)
        .map((h) => ({ kind: h.kind, job: h.job! })),
    );
  } catch {
    return [];
  } finally {
    conn.close();
  }
}

async function teardown(ctx: { cwd: string; server: TestServer }): Promise<void> {
  const { cwd } = ctx;
  const jobs = clusterJobs(cwd);
  const slurm = jobs.filter((j) => j.kind === 'slurm').map((j) => j.job);
  const ge = jobs.filter((j) => j.kind === 'gridengine').map((j) => j.job);
  if (slurm.length > 0) spawnSync('scancel', slurm, { timeout: 30_000 });
  if (ge.length > 0) spawnSync('qdel', ge, { timeout: 30_000 });
  {
    const s = ctx.server;
    if (s.proc.child.exitCode === null && s.proc.child.signalCode === null) {
      const pools = await runDrover(['pool', 'status', '--json'], { cwd });
      if (pools.code === 0) {
        for (const p of JSON.parse(pools.stdout) as { name: string; state: string }[]) {
          if (p.state === 'up') await runDrover(['pool', 'down', p.name, '--force'], { cwd });
        }
      }
      await waitFor('the pool workers to leave', async () => liveWorkers(cwd).length === 0, 15_000).catch(
        () => {},
      );
      s.proc.child.kill('SIGTERM');
      await s.proc.result;
    }
    const leaked = liveWorkers(cwd);
    killPool(cwd);
    if (leaked.length > 0)
      throw new Error(`worker processes ${leaked.join(', ')} were still running after the test`);
  }
}

/** Create a local pool and wait until its workers are ready. */
export async function createPool(
  cwd: string,
  name: string,
  args: string[],
  timeoutMs = 30_000,
): Promise<void> {
  const r = await runDrover(['pool', 'create', name, ...args], { cwd });
  if (r.code !== 0) throw new Error(`pool create exited ${r.code}: ${r.stderr}`);
  const want = Number(args[args.indexOf('--workers') + 1]);
  await waitFor(
    `${want} workers of pool ${name} ready`,
    async () => {
      const s = await runDrover(['pool', 'status', name, '--json'], { cwd });
      const p = JSON.parse(s.stdout) as { workers: { state: string }[] };
      return p.workers.filter((w) => w.state === 'ready').length === want;
    },
    timeoutMs,
  );
}
