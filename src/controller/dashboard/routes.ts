import type { FastifyInstance } from 'fastify';
import type { MeAnswer } from '../../protocol/dashboard.js';
import { actionRoutes } from './action-routes.js';
import { type DashboardContext, jobOf, UI, user } from './context.js';
import { loginRoutes } from './login-routes.js';
import { poolRoutes } from './pool-routes.js';
import { readRoutes } from './read-routes.js';

export type { DashboardContext } from './context.js';

/**
 * Register the dashboard: its page and files (public), the login, and its routes (user): who serves it, the live
 * event stream, the reads of jobs and tasks (read-routes.ts), of pools (pool-routes.ts), and the actions
 * (action-routes.ts). The answers are the contract of src/protocol/dashboard.ts.
 */
export function dashboardRoutes(app: FastifyInstance, d: DashboardContext): void {
  loginRoutes(app, d.ledger, d.sessions);
  app.get(
    `${UI}/me`,
    { config: user },
    async (): Promise<MeAnswer> => ({
      drover: d.version,
      read_only: d.readOnly,
      folder: d.ledger().paths.root,
    }),
  );

  // The stream's events are LiveEvent (src/protocol/dashboard.ts), written by the live hub.
  const stream = { ...user, pageKeyInQuery: true };
  app.get<{ Querystring: { job?: string } }>(`${UI}/events`, { config: stream }, async (req, reply) => {
    const ledger = d.ledger();
    // No refresh here: the hub refreshes as it takes the stream's first signature.
    const jobId = req.query.job === undefined ? undefined : jobOf(ledger, req.query.job, () => {}).id;
    reply.hijack();
    d.live().add(reply.raw, jobId);
  });

  readRoutes(app, d);
  poolRoutes(app, d);
  actionRoutes(app, d);
}
