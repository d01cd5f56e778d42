import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';

/** Something with `after` hooks: a node:test TestContext or suite context. */
interface HasAfter {
  after(fn: () => void | Promise<void>): void;
}

/**
 * A fresh temporary folder to run drover in. After the test, every process left behind by its launches is
 * killed (task process groups and runners, by the pids in its records and ledger) and the folder is removed.
 */
export function tempWorkspace(t: HasAfter, prefix = 'drover-test-'): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  t.after(async () => {
    await killLeftovers(dir);
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}

/** The working directory of a process, or undefined if it is gone or not readable. */
function processCwd(pid: number): string | undefined {
  try {
    return fs.readlinkSync(`/proc/${pid}/cwd`);
  } catch {
    return undefined;
  }
}

/** The fields of /proc/PID/stat after the process's name (0: state, 1: parent, 2: process group), or undefined if it is gone. */
export function statFields(pid: number): string[] | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** The process group of a process, or undefined if it is gone. */
function processGroup(pid: number): number | undefined {
  const fields = statFields(pid);
  return fields && Number(fields[2]);
}

const inside = (dir: string, p: string | undefined) =>
  p !== undefined && (p === dir || p.startsWith(`${dir}/`));

/** Record files of every launch in a working folder. */
export function recordFiles(dir: string): string[] {
  const jobs = path.join(dir, '.drover', 'jobs');
  const out: string[] = [];
  for (const job of safeReaddir(jobs)) {
    const launches = path.join(jobs, job, 'launches');
    for (const l of safeReaddir(launches)) {
      const records = path.join(launches, l, 'records');
      for (const f of safeReaddir(records)) if (f.endsWith('.jsonl')) out.push(path.join(records, f));
    }
  }
  return out;
}

function safeReaddir(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

/** Every record (parsed line) a working folder's runners wrote. */
export function readRecords(dir: string): Record<string, unknown>[] {
  return recordFiles(dir).flatMap((f) =>
    fs
      .readFileSync(f, 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .flatMap((l) => {
        try {
          return [JSON.parse(l) as Record<string, unknown>];
        } catch {
          return [];
        }
      }),
  );
}

/** Pids of task processes (each its own process group) recorded as started in a working folder. */
export function taskPids(dir: string): number[] {
  return readRecords(dir)
    .filter((r) => r.type === 'start' && typeof r.pid === 'number' && r.pid > 0)
    .map((r) => r.pid as number);
}

/** Pids of runners: from runner records and from the ledger's launch handles. */
function runnerPids(dir: string): number[] {
  const pids = readRecords(dir)
    .filter((r) => r.type === 'runner' && typeof r.pid === 'number')
    .map((r) => r.pid as number);
  const db = path.join(dir, '.drover', 'ledger.db');
  if (fs.existsSync(db)) {
    try {
      const conn = new Database(db, { readonly: true, fileMustExist: true });
      try {
        for (const row of conn.prepare('SELECT handles FROM launches').all() as { handles: string }[]) {
          const h = JSON.parse(row.handles) as { pid?: number };
          if (typeof h.pid === 'number') pids.push(h.pid);
        }
      } finally {
        conn.close();
      }
    } catch {
      // no launches table yet
    }
  }
  return pids;
}

/**
 * Kill what a working folder's launches left running: each recorded task's process group and each runner,
 * but only processes that still work in that folder (a pid reused by an unrelated process is left alone).
 */
export async function killLeftovers(dir: string): Promise<void> {
  for (const pid of [...taskPids(dir), ...runnerPids(dir)]) {
    if (pid === process.pid || !inside(dir, processCwd(pid))) continue;
    try {
      if (processGroup(pid) === pid) process.kill(-pid, 'SIGKILL');
      else process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  // Task processes the records do not name (a runner killed before it wrote their start).
  for (const p of launchProcesses(dir)) {
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  // Children of a task whose leader is gone still carry its group id.
  for (const pid of taskPids(dir)) {
    for (const other of safeReaddir('/proc')) {
      const n = Number(other);
      if (!Number.isInteger(n) || n === process.pid) continue;
      if (processGroup(n) === pid && inside(dir, processCwd(n))) {
        try {
          process.kill(-pid, 'SIGKILL');
        } catch {
          // gone
        }
        break;
      }
    }
  }
}

/**
 * Live processes (not zombies) of a working folder's local launches, found the way a user would with `ps e`:
 * by the DROVER_LAUNCH_DIR every task of a local launch carries in its environment. With their task id.
 */
export function launchProcesses(dir: string): { pid: number; task: number; attempt: number }[] {
  const out: { pid: number; task: number; attempt: number }[] = [];
  const prefix = `DROVER_LAUNCH_DIR=${path.join(dir, '.drover')}/`;
  for (const name of safeReaddir('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === process.pid || !isAlive(pid)) continue;
    let env: string[];
    try {
      env = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    } catch {
      continue;
    }
    if (!env.some((kv) => kv.startsWith(prefix))) continue;
    const get = (k: string) => Number(env.find((kv) => kv.startsWith(`${k}=`))?.slice(k.length + 1));
    out.push({ pid, task: get('DROVER_TASK_ID'), attempt: get('DROVER_ATTEMPT') });
  }
  return out;
}

/** Kill a task's process group by pid (tests that leave tasks running on purpose). */
export function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/**
 * The pid (or process group) a task wrote into `file`, or undefined until it has: the shell makes the file before
 * its command writes into it, and an empty file read as 0, the kernel threads' group (`kill(0, 0)` never throws).
 */
export function pidIn(file: string): number | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  const pid = Number(text.trim());
  return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
}

/** True while a process exists (not a zombie). */
export function isAlive(pid: number): boolean {
  const fields = statFields(pid);
  return fields !== undefined && fields[0] !== 'Z';
}

/**
 * Every file and folder under `dir` with its size (folders: `/`), sorted: what a command may not change.
 * SQLite's transient `-wal`/`-shm`/`-journal` files come and go with any open connection and are left out;
 * compare the ledger's content with ledgerDump.
 */
export function snapshot(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string, rel: string) => {
    for (const name of safeReaddir(d).sort()) {
      if (/\.db-(wal|shm|journal)$/.test(name)) continue;
      const full = path.join(d, name);
      const r = rel ? `${rel}/${name}` : name;
      const st = fs.statSync(full);
      if (st.isDirectory()) {
        out.push(`${r}/`);
        walk(full, r);
      } else out.push(`${r} ${st.size}`);
    }
  };
  walk(dir, '');
  return out;
}

/** Every row of every table of a folder's ledger, as sorted JSON lines (undefined when there is no ledger). */
export function ledgerDump(dir: string): string[] | undefined {
  const file = path.join(dir, '.drover', 'ledger.db');
  if (!fs.existsSync(file)) return undefined;
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as {
      name: string;
    }[];
    return tables.flatMap(({ name }) =>
      (db.prepare(`SELECT * FROM "${name}"`).all() as object[])
        .map((r) => `${name} ${JSON.stringify(r)}`)
        .sort(),
    );
  } finally {
    db.close();
  }
}

/** The longest pause between two probes of `waitFor` (unless its own interval is longer). */
const LONGEST_PAUSE_MS = 2_000;

/**
 * Poll `probe` until it returns something other than undefined/false; fails with `what` (or what it returns, when
 * it is a function: the message can then tell what the last probe saw) after `timeoutMs`.
 *
 * A probe often starts a process (`drover status` asks a scheduler too), whose CPU every test running beside this
 * one shares, so the pause after a probe is `intervalMs` at least, twice what the probe took (a waiter probes a
 * third of its time at most, less when the machine is busy and probes slow down), and a tenth of the time waited
 * so far (a change is seen at most ~10% late), up to 2 s; the last probe comes at the deadline.
 */
export async function waitFor<T>(
  what: string | (() => string),
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 60_000,
  intervalMs = 100,
): Promise<T> {
  const start = Date.now();
  const deadline = start + timeoutMs;
  let last: unknown;
  for (;;) {
    const t0 = Date.now();
    try {
      const v = await probe();
      if (v !== undefined && v !== false) return v;
    } catch (err) {
      last = err;
    }
    const now = Date.now();
    if (now > deadline) {
      const named = typeof what === 'string' ? what : what();
      throw new Error(`gave up waiting for ${named}${last ? `: ${String(last)}` : ''}`);
    }
    const pause = Math.min(
      Math.max(intervalMs, 2 * (now - t0), (t0 - start) / 10),
      Math.max(intervalMs, LONGEST_PAUSE_MS),
      deadline - now + 1,
    );
    await new Promise((r) => setTimeout(r, pause));
  }
}

/** Write a small script into the working folder and return its name. */
export function writeScript(dir: string, name: string, body: string): string {
  fs.writeFileSync(path.join(dir, name), body);
  return name;
}
