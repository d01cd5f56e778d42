import type { Command } from 'commander';
import { readServerInfo, serverAlive, serverFiles } from '../backends/pool/server-info.js';
import { advertisedHost, isLoopback, isUnspecified } from '../controller/listen.js';
import { startServer } from '../controller/server.js';
import { createToken, listTokens, revokeToken } from '../controller/tokens.js';
import { DroverError, usageError } from '../errors.js';
import { droverPaths } from '../paths.js';
import { COUNTS, SECONDS } from '../util/limits.js';
import { note, printJson, printTable } from './output.js';
import { durationOption, intOption } from './parse.js';
import { self } from './self.js';
import { openExistingWorkspace, openWorkspace } from './workspace.js';

interface StartOptions {
  host: string;
  advertise?: string;
  port: number;
  heartbeat: number;
  lostAfter: number;
}

/** Register `drover server` (the controller) and `drover server token create|list|revoke`, `drover server stop`. */
export function registerServer(program: Command): void {
  const server = program
    .command('server')
    .description('the controller of worker pools: HTTP API, dispatcher and state (see docs/pools.md)');
  server
    .command('start', { isDefault: true })
    .description(
      'run the controller in the foreground for this folder (SIGTERM or Ctrl-C stops it gracefully)',
    )
    .option('--host <addr>', 'address to listen on (default loopback only)', '127.0.0.1')
    .option(
      '--advertise <host>',
      'the address workers and clients are told to use (default: --host; for 0.0.0.0, this machine’s address)',
    )
    .option(
      '--port <n>',
      'port (0: any free port; the URL is written to .drover/server/server.json)',
      intOption('--port', COUNTS.port),
      7733,
    )
    .option(
      '--heartbeat <s>',
      'seconds between worker heartbeats',
      durationOption('--heartbeat', SECONDS.heartbeat),
      2,
    )
    .option(
      '--lost-after <s>',
      'seconds without a word from a worker before its running tasks are lost',
      durationOption('--lost-after', SECONDS.lostAfter),
      15,
    )
    .action(async (opts: StartOptions) => {
      await runServer(opts);
    });
  server
    .command('stop')
    .description(
      'stop this folder’s controller gracefully (workers keep running and reconnect to the next one)',
    )
    .action(() => {
      const info = readServerInfo(droverPaths());
      if (!info || !serverAlive(info))
        throw new DroverError('not-found', 'no drover server runs for this folder');
      process.kill(info.pid, 'SIGTERM');
      note(`drover: asked the server (pid ${info.pid}) to stop`);
    });
  const token = server.command('token').description('tokens of the controller: create, list, revoke');
  token
    .command('create')
    .description('create a token and print it (once: only its hash is kept)')
    .option('--worker', 'a worker token: it can only do worker things')
    .option('--pool <name>', 'worker tokens: only for this pool')
    .option('--name <text>', 'what it is for', 'created by drover server token create')
    .option('--json', 'print {id, token, kind, pool}')
    .action((opts: { worker?: boolean; pool?: string; name: string; json?: boolean }) => {
      if (opts.pool !== undefined && !opts.worker)
        throw usageError('--pool is for --worker tokens: add --worker');
      const ws = openWorkspace();
      const { token: text, row } = ws.ledger.write(() =>
        createToken(ws.ledger, opts.worker ? 'worker' : 'user', opts.name, opts.pool ?? null),
      );
      if (opts.json) printJson({ id: row.id, token: text, kind: row.kind, pool: row.pool });
      else process.stdout.write(`${text}\n`);
    });
  token
    .command('list')
    .description('every token: id, kind, pool, name, created, revoked')
    .option('--json', 'print a JSON array')
    .action((opts: { json?: boolean }) => {
      const ws = openExistingWorkspace();
      const rows = (ws ? listTokens(ws.ledger) : []).map((t) => ({
        id: t.id,
        kind: t.kind,
        pool: t.pool,
        name: t.name,
        created_at: new Date(t.created_at * 1000).toISOString(),
        revoked_at: t.revoked_at === null ? null : new Date(t.revoked_at * 1000).toISOString(),
      }));
      if (opts.json) return printJson(rows);
      printTable(
        ['id', 'kind', 'pool', 'name', 'created', 'revoked'],
        rows.map((r) => [
          r.id,
          r.kind,
          r.pool ?? '-',
          r.name,
          r.created_at.slice(0, 19),
          r.revoked_at?.slice(0, 19) ?? '-',
        ]),
      );
    });
  token
    .command('revoke')
    .description('revoke a token by id: requests with it are refused from now on')
    .argument('<id>', 'the token id (drover server token list)')
    .action((id: string) => {
      const ws = openExistingWorkspace();
      if (!ws) throw new DroverError('not-found', `no token with id '${id}': this folder has no ledger`);
      ws.ledger.write(() => revokeToken(ws.ledger, id));
      note(`drover: token ${id} revoked`);
    });
  for (const c of [server, token, ...server.commands, ...token.commands]) {
    c.exitOverride().configureOutput({ outputError: () => {} });
  }
}

async function runServer(opts: StartOptions): Promise<void> {
  if (opts.advertise !== undefined && (opts.advertise === '' || isUnspecified(opts.advertise))) {
    throw usageError(
      `--advertise '${opts.advertise}' is not an address workers can connect to: give a host name or IP`,
    );
  }
  const paths = droverPaths();
  const old = readServerInfo(paths);
  if (old && serverAlive(old)) {
    throw new DroverError(
      'conflict',
      `a drover server already runs for this folder (pid ${old.pid}, ${old.url})`,
    );
  }
  const advertise = opts.advertise ?? advertisedHost(opts.host);
  const running = await startServer({
    paths,
    host: opts.host,
    advertise,
    port: opts.port,
    heartbeat: opts.heartbeat,
    lostAfter: opts.lostAfter,
    version: self.version,
    node: process.execPath,
    bin: self.bin,
  });
  const files = serverFiles(paths);
  note(`drover server: listening on ${running.url} (pid ${process.pid}); logs in ${files.log}`);
  if (!isLoopback(opts.host)) {
    note(
      `drover server: warning: --host ${opts.host} takes connections from other machines${isUnspecified(opts.host) ? ' (every interface)' : ''}: anyone who can reach it may try tokens, and traffic is not encrypted; workers are told ${running.url}`,
    );
  }
  if (running.createdToken) note(`drover server: created a user token in ${files.token} (mode 0600)`);
  note(
    `drover server: dashboard at ${running.url}/ — open ${running.loginUrl} (works once, for 15 minutes) or log in with a user token`,
  );
  await new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (sig: NodeJS.Signals) => {
      if (stopping) process.exit(128 + (sig === 'SIGINT' ? 2 : 15));
      stopping = true;
      note(`drover server: ${sig}: shutting down`);
      void running.close().then(resolve);
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });
}
