import fs from 'node:fs';
import { ownElement } from '../backends/pool/starting.js';
import { ApiClient, ApiError } from '../protocol/client.js';
import type {
  AttemptKey,
  PollAnswer,
  RegisterAnswer,
  RegisterRequest,
  Resources,
  TaskAssignment,
} from '../protocol/messages.js';
import { WORKER_SECRET_HEADER } from '../protocol/messages.js';
import type { AttemptRecord } from '../protocol/records.js';
import { newWorkerSecret } from '../protocol/worker-secret.js';
import { chooseStarter } from '../runner/runner.js';
import { cpusAvailable, parseVisibleGpus, planSlots, type Slot } from '../runner/slots.js';
import type { ProcessStarter } from '../runner/starters/starter.js';
import { shortHostname } from '../util/proc.js';
import { FileShipper } from './file-shipper.js';
import { LaunchRunners } from './launch-runners.js';
import { Reporter } from './reporter.js';
import { type RunningSetup, startSetup } from './setup.js';
import { ShippedRecords } from './shipped-records.js';

/** How a worker was started (`drover worker` flags). */
export interface WorkerOptions {
  url: string;
  /** Re-read the URL from this server.json when the controller is away (it may come back on another port). */
  serverFile?: string;
  token: string;
  pool: string;
  cpus?: number;
  gpus?: number;
  memMb?: number;
  slots?: number;
  setup?: string;
  /** Folder for its record files (a local journal of what it ran). */
  dir: string;
  /** Give up after the controller was unreachable this long (seconds). */
  patience: number;
  /**
   * False (`--no-shared-fs`): this host does not see the controller's folder. Task logs and results are kept
   * under `dir` and sent to the controller over the API (file-shipper.ts), and nothing of the controller's
   * `.drover/` is read (not even `serverFile`).
   */
  sharedFs?: boolean;
  log(msg: string): void;
}

const POLL_WAIT = 20;
/**
 * How long a registration may take: short, because a restarted controller gives its workers only --lost-after
 * (default 15 s) to come back, and a port that swallows connections must not use that time up.
 */
const REGISTER_TIMEOUT_MS = 5000;

/**
 * A pool worker: registers with its resources, runs its setup once, then long-polls the controller for tasks
 * and runs them through src/runner (launch-runners.ts), reporting every attempt record. It keeps
 * running its tasks while the controller is away and tells the next one what it holds, proving who it is with
 * the session secret it chose and the id the controller bound to it at its first registration.
 */
export class Worker {
  /** Its id, given by the controller at registration ('' before). */
  id = '';
  /** Its session secret: chosen here for its first registration (a controller of an earlier version gives one). */
  private secret = newWorkerSecret();
  private readonly api: ApiClient;
  private readonly slots: Slot[];
  private readonly resources: Resources;
  private readonly starter: ProcessStarter;
  private readonly runners: LaunchRunners;
  /** Registrations so far: an answer to a request sent before the last one speaks of an earlier session. */
  private epoch = 0;
  private readonly reporter: Reporter;
  /** Without a shared filesystem: sends the task logs and results, and holds each end until they are sent. */
  private readonly shipper: FileShipper | undefined;
  private readonly shipped: ShippedRecords | undefined;
  private stopping: 'drain' | 'stop' | undefined;
  private setupDone = false;
  private setup: RunningSetup | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private heartbeat = 5;
  private finished!: (code: number) => void;

  constructor(private readonly o: WorkerOptions) {
    this.api = new ApiClient(o.url, o.token, { keepAlive: true });
    this.api.headers[WORKER_SECRET_HEADER] = this.secret;
    this.reporter = new Reporter(this.api, () => this.id, o.log);
    const report = (launch: number, r: AttemptRecord) => this.reporter.add(launch, r);
    if (o.sharedFs === false) {
      this.shipper = new FileShipper(this.api, () => this.id, o.log);
      this.shipped = new ShippedRecords(this.shipper, report);
    }
    const cpus = o.cpus ?? cpusAvailable();
    const visible = parseVisibleGpus(process.env.CUDA_VISIBLE_DEVICES);
    const gpus = o.gpus ?? visible.length;
    const slots = o.slots ?? cpus;
    this.resources = { cpus, gpus, mem_mb: o.memMb ?? 0 };
    const perSlot = gpus > 0 ? Math.max(1, Math.floor(gpus / slots)) : 0;
    this.slots = planSlots({
      cpusAvailable: cpus,
      maxTasks: slots,
      ...(perSlot > 0
        ? { gpusPerTask: perSlot, visibleGpus: visible.length > 0 ? visible : range(gpus) }
        : {}),
    });
    this.starter = chooseStarter(this.slots, process.env, process.cwd(), process.env.DROVER_SPAWNER);
    this.runners = new LaunchRunners({
      starter: this.starter,
      slots: this.slots,
      dir: o.dir,
      pool: o.pool,
      id: () => this.id,
      onRecord: (launch, r) => (this.shipped ? this.shipped.add(launch, r) : report(launch, r)),
      log: o.log,
      ...(o.sharedFs === false ? { localDir: o.dir } : {}),
    });
  }

  /** Run until asked to stop; resolves with the exit code. */
  run(): Promise<number> {
    const done = new Promise<number>((r) => {
      this.finished = r;
    });
    void this.main();
    return done;
  }

  /** SIGTERM: stop the running tasks (recorded `killed`), report, leave. */
  terminate(): void {
    if (this.stopping === 'stop') return;
    this.stopping = 'stop';
    if (!this.setupDone) this.setup?.stop();
    this.runners.terminateAll();
    void this.finish('stopped by SIGTERM', 0);
  }

  private async main(): Promise<void> {
    try {
      await this.register();
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 0) {
        this.o.log(`cannot register: ${(err as Error).message}`);
        return this.exit(1);
      }
      await this.reconnect(err);
      if (this.stopping) return;
    }
    this.heartbeatTimer = setInterval(() => void this.beat(), this.heartbeat * 1000);
    if (this.o.setup !== undefined) {
      this.setup = startSetup(this.o.setup);
      const code = await this.setup.done;
      this.setupDone = true;
      if (this.stopping) return; // stopped during its setup: finish() leaves
      if (code !== 0) {
        this.o.log(`setup command exited ${code}: leaving`);
        await this.api
          .call('POST', `/workers/${this.id}/leave`, { reason: `setup exited ${code}` })
          .catch(() => {});
        return this.exit(1);
      }
    }
    while (!this.stopping) {
      let a: PollAnswer;
      try {
        a = await this.api.call<PollAnswer>(
          'POST',
          `/workers/${this.id}/poll`,
          { wait: POLL_WAIT },
          (POLL_WAIT + 30) * 1000,
        );
      } catch (err) {
        if (this.stopping) break;
        await this.reconnect(err);
        continue;
      }
      this.take(a);
    }
  }

  private take(a: PollAnswer): void {
    for (const t of a.tasks) this.start(t);
    for (const c of a.cancel) this.runners.cancel(c.launch, c.task);
    if (a.stop) this.stop(a.stop);
  }

  private stop(how: 'drain' | 'stop'): void {
    if (this.stopping === 'stop' || this.stopping === how) return;
    this.stopping = how;
    if (!this.setupDone) this.setup?.stop();
    if (how === 'stop') this.runners.cancelAll();
    void this.finish(how === 'drain' ? 'drained' : 'stopped by the controller', 0);
  }

  /** Wait for the tasks to end and their records to be acknowledged, then leave. */
  private async finish(reason: string, code: number): Promise<void> {
    this.runners.closeAll();
    const deadline = Date.now() + 60_000;
    this.reporter.flush(true);
    // The reporter sends (and resends, with its backoff) by itself: this only waits.
    while (this.reporter.busy && !this.reporter.refused && Date.now() < deadline) await sleep(50);
    await this.api.call('POST', `/workers/${this.id}/leave`, { reason }, 5000).catch(() => {});
    this.exit(code);
  }

  private exit(code: number): void {
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    this.starter.close();
    this.shipper?.close();
    this.api.close();
    this.finished(code);
  }

  private start(t: TaskAssignment): void {
    if (!this.runners.start(t)) return;
    // Its records come once its process started, after this.
    this.reporter.outbox.holding.set(`${t.launch}:${t.task}`, {
      launch: t.launch,
      task: t.task,
      attempt: t.attempt,
    });
  }

  private async beat(): Promise<void> {
    const epoch = this.epoch;
    try {
      const a = await this.api.call<{ stop?: 'drain' | 'stop' }>(
        'POST',
        `/workers/${this.id}/heartbeat`,
        {},
        10_000,
      );
      if (a.stop) this.stop(a.stop);
    } catch (err) {
      // The poll loop notices and registers again: the answer says which attempts are no longer its own. A
      // worker draining or stopping polls no more: it stops them all itself, then leaves.
      if (this.stopping && isUnknownWorker(err) && epoch === this.epoch) this.forgotten();
    }
  }

  /**
   * The controller answered a draining or stopping worker that it does not count it as live (it took it for lost,
   * or never knew it): none of the attempts it holds is its own any more — the controller recorded the started
   * ones `lost` and may run them again elsewhere. Stop them all and drop their records.
   */
  private forgotten(): void {
    const held = this.reporter.outbox.held();
    if (held.length > 0) this.disown(held, 'the controller no longer counts this worker as live');
  }

  /**
   * Attempts it holds are no longer its own: its runners stop their processes (SIGTERM, then SIGKILL after the
   * launch's grace) and report nothing more of them, and their records not yet acknowledged are dropped.
   */
  private disown(keys: readonly AttemptKey[], why: string): void {
    this.runners.abandon(keys);
    this.shipped?.disown(keys);
    this.reporter.outbox.disown(keys);
    this.o.log(`${why}: stopped ${keys.length} attempt(s) no longer mine; their records are dropped`);
  }

  /**
   * Register: the first time with its secret, for an id (sent again after a lost answer, the same secret gets the
   * same id); again (after the controller was away) with both, listing the attempts it holds. The answer disowns
   * those that are not its own (taken back while it was taken for lost; all of them when a controller that does
   * not know the id, another ledger, gives it a new one).
   */
  private async register(): Promise<void> {
    const element = ownElement();
    const req: RegisterRequest = {
      ...(this.id !== '' ? { id: this.id } : {}),
      secret: this.secret,
      pool: this.o.pool,
      host: shortHostname(),
      pid: process.pid,
      resources: this.resources,
      slots: this.slots.length,
      setup: this.o.setup !== undefined && !this.setupDone,
      holding: this.reporter.outbox.held(),
      ...(element !== undefined ? { element } : {}),
    };
    let a: RegisterAnswer;
    try {
      a = await this.api.call<RegisterAnswer>('POST', '/workers/register', req, REGISTER_TIMEOUT_MS);
    } catch (err) {
      if (!(err instanceof ApiError) || err.code !== 'unknown-worker' || req.id === undefined) throw err;
      this.o.log(`the controller does not know worker ${this.id}: registering anew`);
      const { id: _id, ...fresh } = req;
      a = await this.api.call<RegisterAnswer>('POST', '/workers/register', fresh, REGISTER_TIMEOUT_MS);
    }
    this.epoch++;
    // Before anything else reaches it (tasks come with polls, after this answer): its attempts may be taken back.
    if (a.disowned && a.disowned.length > 0) this.disown(a.disowned, 'the controller took back attempts');
    if (a.secret !== undefined) {
      this.secret = a.secret;
      this.api.headers[WORKER_SECRET_HEADER] = a.secret;
    }
    this.id = a.id;
    this.heartbeat = a.heartbeat;
    this.reporter.outbox.ack(a.seq);
    this.o.log(`registered with ${this.api.url} as ${this.id} (${this.slots.length} slots)`);
    this.reporter.flush(true);
  }

  /** The controller is away or forgot us: register again, with backoff, up to `patience` seconds. */
  private async reconnect(err: unknown): Promise<void> {
    const start = Date.now();
    let delay = 100;
    this.o.log(`lost the controller (${(err as Error).message}): reconnecting`);
    for (;;) {
      if (this.stopping) return;
      if (this.o.serverFile && this.o.sharedFs !== false) {
        try {
          this.api.url = (JSON.parse(fs.readFileSync(this.o.serverFile, 'utf8')) as { url: string }).url;
        } catch {
          // not there (yet)
        }
      }
      try {
        await this.register();
        return;
      } catch (e) {
        if (e instanceof ApiError && (e.status === 401 || e.status === 403 || e.status === 404)) {
          this.o.log(`refused by the controller: ${e.message}: stopping`);
          this.stop('stop');
          return;
        }
      }
      if (Date.now() - start > this.o.patience * 1000) {
        this.o.log(`no controller for ${this.o.patience} s: stopping`);
        this.terminate();
        return;
      }
      await sleep(delay);
      delay = Math.min(1000, delay * 2);
    }
  }
}

/** The controller does not count the worker as live (409 `unknown-worker`). */
function isUnknownWorker(err: unknown): boolean {
  return err instanceof ApiError && err.code === 'unknown-worker';
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

function range(n: number): string[] {
  return Array.from({ length: n }, (_, i) => String(i));
}
