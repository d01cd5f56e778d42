import type { Command } from 'commander';
import { isLoopback, isUnspecified } from '../controller/listen.js';
import { startUi } from '../controller/ui-server.js';
import { DroverError } from '../errors.js';
import { COUNTS } from '../util/limits.js';
import { note } from './output.js';
import { intOption } from './parse.js';
import { self } from './self.js';
import { openExistingWorkspace } from './workspace.js';

/** Register `drover ui`: a read-only dashboard of this folder, with no controller. */
export function registerUi(program: Command): void {
  program
    .command('ui')
    .description(
      'a read-only web dashboard of this folder’s jobs (no pool or server needed; see docs/dashboard.md)',
    )
    .option(
      '--host <addr>',
      'address to listen on (default loopback only: reach it by an SSH tunnel)',
      '127.0.0.1',
    )
    .option('--port <n>', 'port (0: any free port)', intOption('--port', COUNTS.port), 7734)
    .addHelpText(
      'after',
      `
It prints a one-time login link (it works once, for 15 minutes); a user token of this folder
(drover server token create) logs in too. From a laptop: ssh -L 7734:127.0.0.1:7734 HOST, then open the link.
Ctrl-C stops it.`,
    )
    .action(async (opts: { host: string; port: number }) => {
      const ws = openExistingWorkspace();
      if (!ws) {
        throw new DroverError(
          'not-found',
          'no drover folder here (.drover/): run drover ui where you ran drover prelaunch or launch',
        );
      }
      const ui = await startUi({
        ledger: ws.ledger,
        paths: ws.paths,
        host: opts.host,
        port: opts.port,
        version: self.version,
      });
      note(`drover ui: read-only dashboard at ${ui.url}/`);
      note(`drover ui: open ${ui.loginUrl} (works once, for 15 minutes) or log in with a user token`);
      if (!isLoopback(opts.host)) {
        note(
          `drover ui: warning: --host ${opts.host} takes connections from other machines${isUnspecified(opts.host) ? ' (every interface)' : ''}; traffic is not encrypted`,
        );
      }
      await new Promise<void>((resolve) => {
        const stop = () => {
          void ui.close().then(() => {
            ws.ledger.close();
            resolve();
          });
        };
        process.once('SIGTERM', stop);
        process.once('SIGINT', stop);
      });
    });
}
