import fs from 'node:fs';
import { type ServerInfo, serverFiles } from '../backends/pool/server-info.js';
import { Ledger } from '../ledger/ledger.js';
import { type ServerLock, takeServerLock } from '../ledger/server-lock.js';
import { userTokenCount } from '../ledger/server-tokens.js';
import type { DroverPaths } from '../paths.js';
import { processStartTime, shortHostname } from '../util/proc.js';
import { Autoscaler } from './autoscale.js';
import { Controller } from './controller.js';
import { LiveHub } from './dashboard/live.js';
import { dashboardRoutes } from './dashboard/routes.js';
import { Sessions } from './dashboard/sessions.js';
import { type AppState, makeApp } from './http.js';
import { listenOrExplain, urlOf } from './listen.js';
import type { PoolContext } from './pool-row.js';
import { finishPendingStops } from './pools.js';
import { userRoutes } from './routes.js';
import { createToken, writeSecret } from './tokens.js';
import { workerRoutes } from './worker-routes.js';

/** How to run the controller. */
export interface ServerOptions {
  paths: DroverPaths;
  host: string;
  port: number;
  /** The host workers and clients are told to connect to (default: `host`, or this machine's address). */
  advertise?: string;
  /** Seconds between worker heartbeats. */
  heartbeat: number;
  /** Seconds of silence after which a worker is lost. */
  lostAfter: number;
  /** drover's version, node and entry script (to start local workers). */
  version: string;
  node: string;
  bin: string;
  /** Write structured logs (JSON lines) here; default .drover/server/server.log. */
  logFile?: string;
}

/** A running controller. */
export interface RunningServer {
  url: string;
  /** Graceful shutdown: stop taking requests, answer waiting workers, close the database. */
  close(): Promise<void>;
  /** The first user token, when this start created it. */
  createdToken?: string;
  /** The dashboard's one-time login link (works once, for 15 minutes). */
  loginUrl: string;
}

/** A log stream that keeps what is written until the file is opened (the server writes nothing before it listens). */
class LateStream {
  private out: fs.WriteStream | undefined;
  private early: string[] = [];
  write(s: string): void {
    if (this.out) this.out.write(s);
    else this.early.push(s);
  }
  open(file: string): fs.WriteStream {
    this.out = fs.createWriteStream(file, { flags: 'a' });
    for (const s of this.early) this.out.write(s);
    this.early = [];
    return this.out;
  }
}

/**
 * Start `drover server`. It listens first: a server that cannot (port in use, address not here) fails at once
 * with the reason, having touched nothing. Then it takes the ledger's controller lock (one controller per
 * ledger), opens the ledger, creates the first user token on first start (mode 0600 file), loads the state, and
 * only then answers requests and writes server.json for clients on this host.
 */
export async function startServer(o: ServerOptions): Promise<RunningServer> {
  const files = serverFiles(o.paths);
  const sessions = new Sessions();
  const state: AppState = { ledger: undefined, ready: false, sessions };
  const logStream = new LateStream();
  const app = await makeApp(state, { level: 'info', stream: logStream });
  // Routes read the ledger and the controller from here once they exist (no request is answered before).
  const ctx = { url: '', cwd: process.cwd(), node: o.node, bin: o.bin } as PoolContext;
  userRoutes(app, ctx, o.version);
  workerRoutes(app, ctx, o.heartbeat);
  let live: LiveHub | undefined;
  dashboardRoutes(app, {
    ledger: () => ctx.ledger,
    sessions,
    live: () => {
      live ??= new LiveHub(ctx.ledger, (err) => app.log.error({ err }, 'dashboard live check failed'));
      return live;
    },
    readOnly: false,
    pools: () => ctx,
    drover: { node: o.node, bin: o.bin, cwd: process.cwd() },
    version: o.version,
  });
  await listenOrExplain(app, o.host, o.port);
  let lock: ServerLock | undefined;
  let ledger: Ledger | undefined;
  try {
    fs.mkdirSync(files.dir, { recursive: true, mode: 0o700 });
    lock = takeServerLock(files.dir, () => {
      try {
        const held = JSON.parse(fs.readFileSync(files.info, 'utf8')) as ServerInfo;
        return `pid ${held.pid} on ${held.host}, ${held.url}`;
      } catch {
        return undefined;
      }
    });
    ledger = Ledger.open(o.paths);
  } catch (err) {
    ledger?.close();
    lock?.release();
    await app.close();
    throw err;
  }
  const fileStream = logStream.open(o.logFile ?? files.log);
  let createdToken: string | undefined;
  if (userTokenCount(ledger) === 0 || !fs.existsSync(files.token)) {
    const l = ledger;
    createdToken = l.write(() => createToken(l, 'user', 'first token (server start)').token);
    writeSecret(files.token, createdToken);
  }
  const controller = new Controller(ledger, { heartbeat: o.heartbeat, lostAfter: o.lostAfter, log: app.log });
  const port = (app.server.address() as { port: number }).port;
  const url = urlOf(o.advertise ?? o.host, port);
  Object.assign(ctx, { ledger, controller, url });
  // The state is loaded before the first request: a worker that reconnects at once finds its tasks.
  controller.start();
  const auto = new Autoscaler(ctx);
  ctx.auto = auto;
  auto.start();
  state.ledger = ledger;
  state.ready = true;
  const info: ServerInfo = {
    url,
    host: shortHostname(),
    pid: process.pid,
    pid_start: processStartTime(process.pid),
    started_at: Date.now() / 1000,
  };
  fs.writeFileSync(`${files.info}.tmp`, JSON.stringify(info));
  fs.renameSync(`${files.info}.tmp`, files.info);
  const onUsr1 = () => {
    controller.processCancels();
    setTimeout(() => controller.processCancels(), 100).unref();
    setTimeout(() => controller.processCancels(), 500).unref();
  };
  process.on('SIGUSR1', onUsr1);
  app.log.info({ event: 'start', url, listen: `${o.host}:${port}`, pid: process.pid, version: o.version });
  let closing: Promise<void> | undefined;
  const held = { ledger, lock };
  return {
    url,
    ...(createdToken ? { createdToken } : {}),
    loginUrl: `${url}/login?code=${sessions.code()}`,
    close() {
      closing ??= (async () => {
        process.off('SIGUSR1', onUsr1);
        live?.close();
        auto.stop();
        await finishPendingStops();
        controller.stop();
        await app.close();
        app.log.info({ event: 'stop', pid: process.pid });
        try {
          const now = JSON.parse(fs.readFileSync(files.info, 'utf8')) as ServerInfo;
          if (now.pid === process.pid) fs.rmSync(files.info, { force: true });
        } catch {
          // already gone
        }
        held.ledger.checkpoint();
        held.ledger.close();
        held.lock.release();
        await new Promise<void>((r) => fileStream.end(r));
      })();
      return closing;
    },
  };
}
