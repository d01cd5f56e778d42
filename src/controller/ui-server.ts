import type { Ledger } from '../ledger/ledger.js';
import { ledgerError } from '../ledger/open.js';
import type { DroverPaths } from '../paths.js';
import { LiveHub } from './dashboard/live.js';
import { dashboardRoutes } from './dashboard/routes.js';
import { Sessions } from './dashboard/sessions.js';
import { type AppState, makeApp } from './http.js';
import { listenOrExplain, urlOf } from './listen.js';

/** A running `drover ui`. */
export interface RunningUi {
  url: string;
  /** The one-time login link (works once, for 15 minutes). */
  loginUrl: string;
  close(): Promise<void>;
}

/**
 * `drover ui`: the dashboard of a folder, read-only, with no controller (no pool needed): the same pages as
 * `drover server` serves, brought up to date as `drover status` would, and no actions. A browser logs in with the
 * one-time link it prints, or with a user token of the folder.
 */
export async function startUi(o: {
  ledger: Ledger;
  paths: DroverPaths;
  host: string;
  port: number;
  version: string;
}): Promise<RunningUi> {
  const sessions = new Sessions();
  const state: AppState = { ledger: o.ledger, ready: true, sessions };
  // Only what went wrong, on stderr (the pages' requests are not logged).
  const app = await makeApp(state, { level: 'error', stream: process.stderr });
  // A live check that fails fails again at each tick (a damaged ledger): say each new reason once, not 4 a second.
  let said = '';
  const live = new LiveHub(o.ledger, (err) => {
    const line = `drover ui: ${ledgerError(err, o.paths.ledger)?.message ?? String(err)}\n`;
    if (line !== said) process.stderr.write(line);
    said = line;
  });
  dashboardRoutes(app, {
    ledger: () => o.ledger,
    sessions,
    live: () => live,
    readOnly: true,
    version: o.version,
  });
  await listenOrExplain(app, o.host, o.port, 'drover ui');
  const port = (app.server.address() as { port: number }).port;
  const url = urlOf(o.host, port);
  let closing: Promise<void> | undefined;
  return {
    url,
    loginUrl: `${url}/login?code=${sessions.code()}`,
    close() {
      closing ??= (async () => {
        live.close();
        await app.close();
      })();
      return closing;
    },
  };
}
