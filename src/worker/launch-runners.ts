import fs from 'node:fs';
import path from 'node:path';
import type { AttemptKey, LaunchSettings, TaskAssignment } from '../protocol/messages.js';
import type { AttemptRecord } from '../protocol/records.js';
import type { GroupFile } from '../runner/group.js';
import { Runner } from '../runner/runner.js';
import type { Slot } from '../runner/slots.js';
import type { ProcessStarter } from '../runner/starters/starter.js';

/** What a worker's runners share, and where their records go. */
export interface RunnersContext {
  starter: ProcessStarter;
  slots: Slot[];
  /** Folder for the record files (a local journal of what the worker ran). */
  dir: string;
  pool: string;
  /** The worker's id (runners are made once it registered). */
  id(): string;
  onRecord(launch: number, r: AttemptRecord): void;
  log(msg: string): void;
  /**
   * No shared filesystem with the controller (`--no-shared-fs`): the tasks' logs and results go under this local
   * folder (`<localDir>/<id>/logs/<job>/<launch>/`, sent to the controller by file-shipper.ts), and a launch whose
   * working directory this host does not have runs in the worker's own.
   */
  localDir?: string;
}

/**
 * A pool worker's runners: one per launch, made with the launch's first task, all sharing the worker's starter
 * and slots (so GPU pinning, logs, time limits and cancellation are src/runner's), each kept open until the worker
 * finishes.
 */
export class LaunchRunners {
  private readonly runners = new Map<number, Runner>();
  private readonly settings = new Map<number, LaunchSettings>();

  constructor(private readonly c: RunnersContext) {}

  /** Run a task handed to the worker; false when it came without its launch's settings (it is skipped). */
  start(t: TaskAssignment): boolean {
    if (t.settings) this.settings.set(t.launch, t.settings);
    let runner = this.runners.get(t.launch);
    if (!runner) {
      const s = this.settings.get(t.launch);
      if (!s) {
        this.c.log(`task ${t.task} of launch ${t.launch} came without its launch's settings: skipped`);
        return false;
      }
      runner = this.make(s);
    }
    runner.add([{ id: t.task, command: t.command, attempt: t.attempt, ...(t.env ? { env: t.env } : {}) }]);
    return true;
  }

  /** Cancel a task (the user asked): recorded `cancelled`. */
  cancel(launch: number, task: number): void {
    this.runners.get(launch)?.cancel([task]);
  }

  /** Stop these attempts and report nothing more of them (Runner.abandon). */
  abandon(keys: readonly AttemptKey[]): void {
    const byLaunch = new Map<number, AttemptKey[]>();
    for (const k of keys) byLaunch.set(k.launch, [...(byLaunch.get(k.launch) ?? []), k]);
    for (const [launch, list] of byLaunch) this.runners.get(launch)?.abandon(list);
  }

  /** Cancel every task (the controller said stop). */
  cancelAll(): void {
    for (const r of this.runners.values()) r.cancel('all');
  }

  /** Stop every task, recorded `killed` (the worker got SIGTERM). */
  terminateAll(): void {
    for (const r of this.runners.values()) r.terminate();
  }

  /** No more tasks: each runner ends once its tasks have. */
  closeAll(): void {
    for (const r of this.runners.values()) r.close();
  }

  private make(s: LaunchSettings): Runner {
    const id = this.c.id();
    const local = this.c.localDir;
    const logDir = local !== undefined ? path.join(local, id, 'logs', s.job, String(s.launch)) : s.logDir;
    let cwd = s.cwd;
    if (local !== undefined && !isDirectory(cwd)) {
      cwd = process.cwd();
      this.c.log(`launch ${s.launch}: this host has no folder ${s.cwd}: its tasks run in ${cwd}`);
    }
    const group: GroupFile = {
      v: 1,
      job: s.job,
      launch: s.launch,
      retries: 0,
      retryDelay: 0,
      ...(s.taskTimeout !== undefined ? { taskTimeout: s.taskTimeout } : {}),
      killGrace: s.killGrace,
      ...(s.warnSignal ? { warnSignal: s.warnSignal } : {}),
      logDir,
      logs: s.logs ?? 'files',
      recordsDir: path.join(this.c.dir, id, `launch-${s.launch}`),
      cancelDir: path.join(this.c.dir, id, 'no-cancel-files'),
      ...(s.header ? { header: s.header } : {}),
      ...(s.footer ? { footer: s.footer } : {}),
      ...(s.venv ? { venv: s.venv } : {}),
      env: { ...s.env, DROVER_POOL: this.c.pool, DROVER_WORKER: id },
      cwd,
      termState: 'killed',
      group: 'w',
      tasks: [],
    };
    const runner = new Runner(group, { onRecord: (r) => this.c.onRecord(s.launch, r) }, process.env, {
      starter: this.c.starter,
      slots: this.c.slots,
      keepOpen: true,
      lookahead: Number.POSITIVE_INFINITY,
      // The controller records a worker's segments under the worker's id (worker-events.ts, logPaths).
      segmentName: id,
    });
    this.runners.set(s.launch, runner);
    void runner.run();
    return runner;
  }
}

function isDirectory(dir: string): boolean {
  return fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory() === true;
}
