import fs from 'node:fs';
import { type ServerInfo, serverFiles } from '../backends/pool/server-info.js';
import { Ledger } from '../ledger/ledger.js';
import type { DroverPaths } from '../paths.js';
import { processStartTime, shortHostname } from '../runner/proc.js';
import { Controller } from './controller.js';
import { makeApp } from './http.js';
import { finishPendingStops, type PoolContext } from './pools.js';
import { userRoutes, workerRoutes } from './routes.js';
import { createToken, writeSecret } from './tokens.js';

/** How to run the controller. */
export interface ServerOptions {
  paths: DroverPaths;
  host: string;
  port: number;
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
}

/**
 * Start `drover server`: open the ledger (WAL), create the first user token on first start (mode 0600 file),
 * load the state, listen, and write server.json for clients on this host.
 */
export async function startServer(o: ServerOptions): Promise<RunningServer> {
  const files = serverFiles(o.paths);
  fs.mkdirSync(files.dir, { recursive: true, mode: 0o700 });
  const ledger = Ledger.open(o.paths);
  let createdToken: string | undefined;
  const users = ledger.stmt("SELECT count(*) AS n FROM server_tokens WHERE kind = 'user'").get() as {
    n: number;
  };
  if (users.n === 0 || !fs.existsSync(files.token)) {
    createdToken = ledger.write(() => createToken(ledger, 'user', 'first token (server start)').token);
    writeSecret(files.token, createdToken);
  }
  const logStream = fs.createWriteStream(o.logFile ?? files.log, { flags: 'a' });
  const app = await makeApp(ledger, { level: 'info', stream: logStream });
  const controller = new Controller(ledger, { heartbeat: o.heartbeat, lostAfter: o.lostAfter, log: app.log });
  const ctx: PoolContext = { ledger, controller, url: '', cwd: process.cwd(), node: o.node, bin: o.bin };
  userRoutes(app, ctx, o.version);
  workerRoutes(app, ctx, o.heartbeat);
  // The state is loaded before the first request: a worker that reconnects at once finds its tasks.
  controller.start();
  await app.listen({ host: o.host, port: o.port });
  const port = (app.server.address() as { port: number }).port;
  const url = `http://${o.host.includes(':') ? `[${o.host}]` : o.host}:${port}`;
  ctx.url = url;
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
  app.log.info({ event: 'start', url, pid: process.pid, version: o.version });
  let closing: Promise<void> | undefined;
  return {
    url,
    ...(createdToken ? { createdToken } : {}),
    close() {
      closing ??= (async () => {
        process.off('SIGUSR1', onUsr1);
        finishPendingStops();
        controller.stop();
        await app.close();
        app.log.info({ event: 'stop', pid: process.pid });
        try {
          const now = JSON.parse(fs.readFileSync(files.info, 'utf8')) as ServerInfo;
          if (now.pid === process.pid) fs.rmSync(files.info, { force: true });
        } catch {
          // already gone
        }
        ledger.db.pragma('wal_checkpoint(TRUNCATE)');
        ledger.close();
        await new Promise<void>((r) => logStream.end(r));
      })();
      return closing;
    },
  };
}
