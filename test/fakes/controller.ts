import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { gridEngineElement } from './gridengine/element.js';
import type { ElementExit, Personality } from './personality.js';
import { signalAll, trackDescendants } from './processes.js';
import { slurmElement } from './slurm/element.js';
import {
  appendAccounting,
  type ElementState,
  type FakeJob,
  hostName,
  type JobState,
  jobDir,
  nextJobId,
  readJson,
  writeJson,
} from './state.js';

/**
 * The FAKE scheduler's controller of one job: a detached process that starts the job's pending elements as
 * local processes (in index order, within the throttle and the node's CPUs), stops them at their time limit or
 * on a cancel request (the scheduler's signals, then SIGKILL after the grace), records each end in the
 * accounting, and exits once no element is pending, running or in error. It is the only writer of the job's
 * state.json after submission; scancel/qdel talk to it through request files it acknowledges, or, when it runs
 * in their process (the fake's server runs the controllers of the jobs submitted through it), call it.
 */

/** A cancel request of scancel/qdel. */
export interface CancelRequest {
  indices: number[] | 'all';
  /** Stop running elements to run them again (scontrol requeue, qmod -rj), not to end them. */
  requeue?: boolean;
}

const TICK_MS = 50;
const TRACK_MS = 250;
const NODE_CPUS = 32;

interface Running {
  child: ChildProcess;
  tracked: Set<number>;
  /** The element's stdout, kept open: the scheduler's notices go through the same file offset as its output. */
  outFd: number;
  killAt?: number;
  killedByUs: boolean;
}

/** The controllers running in this process, by job folder: each takes a cancel request at once. */
const here = new Map<string, (req: CancelRequest) => void>();

/** Apply `req` to the job of `folder` if its controller runs in this process; false when it does not. */
export function cancelHere(folder: string, req: CancelRequest): boolean {
  const take = here.get(folder);
  if (!take) return false;
  take(req);
  return true;
}

/**
 * Run job `id` of state folder `dir` to its end. It takes cancel requests (cancelHere) from when it is called:
 * everything before its first wait runs in the caller's turn.
 */
export async function runController(dir: string, id: number): Promise<void> {
  const folder = jobDir(dir, id);
  const job = readJson<FakeJob>(path.join(folder, 'job.json'));
  if (!job) throw new Error(`no job ${id} in ${dir}`);
  const p: Personality = job.scheduler === 'slurm' ? slurmElement : gridEngineElement;
  const host = hostName();
  const state = readJson<JobState>(path.join(folder, 'state.json'))!;
  state.controller = process.pid;
  const running = new Map<number, Running>();
  const save = () => writeJson(path.join(folder, 'state.json'), state);
  save();

  const finish = (el: ElementState, exit: ElementExit) => {
    if (el.state !== 'running') return;
    const r = running.get(el.index);
    running.delete(el.index);
    if (r) fs.closeSync(r.outFd);
    // What the script left behind ends with its element: every process Slurm tracked, Grid Engine's group.
    if (r && p.scope === 'tree') signalAll(r.tracked, 'SIGKILL');
    else if (el.pid) signalAll([-el.pid], 'SIGKILL');
    // Grid Engine reschedules a job that exits 99 (its own way to ask to run again).
    if (job.scheduler === 'gridengine' && exit.code === 99 && !el.stopping) el.requeueing = true;
    if (el.requeueing) {
      // Run again: it pends as a new element would, its run counted.
      el.state = 'pending';
      el.restarts = (el.restarts ?? 0) + 1;
      for (const k of ['requeueing', 'stopping', 'warned', 'pid', 'started'] as const) delete el[k];
      save();
      return;
    }
    el.state = 'done';
    el.ended = Date.now() / 1000;
    const rec = p.record(job, el, exit, host);
    appendAccounting(dir, rec);
    p.ended?.(dir, job, rec, host);
    save();
  };

  const start = (el: ElementState) => {
    el.started = Date.now() / 1000;
    // A Slurm element keeps its own job id when it is run again.
    if (job.scheduler === 'slurm' && el.jobId === undefined) {
      const others = state.elements.some((e) => e !== el && e.state === 'pending');
      el.jobId = others ? nextJobId(dir) : job.id;
    }
    const out = p.outputs(job, el, host);
    if ('error' in out) {
      el.state = 'error';
      el.error = out.error;
      const rec = p.errorRecord?.(job, el);
      if (rec) appendAccounting(dir, rec);
      return;
    }
    const [cmd, args] = p.command(job);
    const child = spawn(cmd, args, {
      cwd: job.cwd,
      env: p.env(job, el, host),
      detached: true,
      stdio: ['ignore', out.out, out.err],
    });
    if (out.err !== out.out) fs.closeSync(out.err);
    el.state = 'running';
    el.pid = child.pid;
    const r: Running = {
      child,
      tracked: new Set(child.pid ? [child.pid] : []),
      outFd: out.out,
      killedByUs: false,
    };
    running.set(el.index, r);
    child.on('error', () => finish(el, { code: 127, signal: null, killedByUs: false }));
    child.on('exit', (code, signal) => finish(el, { code, signal, killedByUs: r.killedByUs }));
  };

  const stop = (el: ElementState, why: 'cancel' | 'timeout') => {
    const r = running.get(el.index);
    if (!r || el.stopping) return;
    el.stopping = why;
    const notice = p.stopNotice(job, el, why, host);
    if (notice) fs.writeSync(r.outFd, notice);
    const { signal, killAfterS } = p.stopSignal(job);
    if (signal === 'SIGKILL') r.killedByUs = true;
    signalTargets(r, el, signal);
    if (killAfterS > 0) r.killAt = Date.now() + killAfterS * 1000;
  };

  const signalTargets = (r: Running, el: ElementState, signal: NodeJS.Signals) => {
    if (p.scope === 'tree') {
      trackDescendants(r.tracked);
      signalAll(r.tracked, signal);
    } else if (el.pid) signalAll([-el.pid], signal);
  };

  const cancel = (req: CancelRequest) => {
    for (const el of state.elements) {
      if (req.indices !== 'all' && !req.indices.includes(el.index)) continue;
      if (req.requeue) {
        if (el.state !== 'running' || el.stopping) continue;
        el.requeueing = true;
        stop(el, 'cancel');
      } else if (el.state === 'pending' || el.state === 'error') el.state = 'removed';
      else if (el.state === 'running') stop(el, 'cancel');
    }
  };

  const handleRequests = () => {
    let names: string[];
    try {
      names = fs.readdirSync(path.join(folder, 'requests')).filter((n) => n.endsWith('.json'));
    } catch {
      return;
    }
    if (names.length === 0) return;
    for (const name of names.sort()) {
      const req = readJson<CancelRequest>(path.join(folder, 'requests', name));
      fs.rmSync(path.join(folder, 'requests', name), { force: true });
      if (req) cancel(req);
    }
    save();
    for (const name of names) fs.writeFileSync(path.join(folder, 'acks', name), '');
  };

  const startPending = () => {
    const now = Date.now();
    if (now < job.submitted * 1000 + job.startDelayMs || job.neverRuns) return;
    let changed = false;
    for (const el of state.elements) {
      if (el.state !== 'pending') continue;
      const busy = state.elements.filter((e) => e.state === 'running').length;
      if (job.throttle !== undefined && busy >= job.throttle) break;
      if ((busy + 1) * job.cpus > NODE_CPUS) break;
      start(el);
      changed = true;
    }
    if (changed) save();
  };

  let lastTrack = 0;
  const tick = () => {
    handleRequests();
    const now = Date.now();
    for (const el of state.elements) {
      const r = running.get(el.index);
      if (!r) continue;
      const warnAt = job.warn && job.limitS !== undefined ? job.limitS - job.warn.beforeS : undefined;
      if (
        job.warn &&
        warnAt !== undefined &&
        el.started !== undefined &&
        !el.warned &&
        el.pid &&
        !el.stopping
      ) {
        if (now >= (el.started + warnAt) * 1000) {
          el.warned = true;
          signalAll([el.pid], job.warn.signal); // B: the batch shell alone
          save();
        }
      }
      if (job.limitS !== undefined && el.started !== undefined && now >= (el.started + job.limitS) * 1000) {
        if (!el.stopping) {
          stop(el, 'timeout');
          save();
        }
      }
      if (r.killAt !== undefined && now >= r.killAt) {
        r.killAt = undefined;
        r.killedByUs = true;
        signalTargets(r, el, 'SIGKILL');
      }
    }
    if (p.scope === 'tree' && now - lastTrack >= TRACK_MS) {
      lastTrack = now;
      for (const r of running.values()) trackDescendants(r.tracked);
    }
    startPending();
    const open = state.elements.some(
      (e) => e.state === 'pending' || e.state === 'running' || e.state === 'error',
    );
    return open || running.size > 0;
  };

  here.set(folder, (req) => {
    cancel(req);
    save();
  });
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      if (!fs.existsSync(path.join(folder, 'job.json'))) {
        for (const r of running.values()) signalAll(r.tracked, 'SIGKILL');
        here.delete(folder);
        clearInterval(timer);
        resolve();
        return;
      }
      if (!tick()) {
        here.delete(folder);
        clearInterval(timer);
        // No controller any more: this process may run on (the fake's server), and must not be taken for one.
        delete state.controller;
        save();
        resolve();
      }
    }, TICK_MS);
  });
}
