import type { FastifyInstance } from 'fastify';
import { runAsTenant } from '../db/tenancy.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * `true`: the route acts across workspaces on purpose (the test helpers, which stand in for
     * the clock, the job runner and the incentive provider) and runs as the owner, not in its
     * caller's workspace scope.
     */
    crossWorkspace?: true;
  }
}

/**
 * After authentication, the rest of a request (its hooks, handler and everything they start) runs
 * in its workspace's scope: row-level security's second wall (src/db/tenancy.ts). A callback
 * hook, so that what follows runs inside the scope. Registered after the authentication hook.
 */
export function installTenantScope(app: FastifyInstance): void {
  app.addHook('onRequest', (request, _reply, done) => {
    const workspaceId = request.principal?.workspaceId;
    if (workspaceId === undefined || request.routeOptions.config.crossWorkspace) done();
    else runAsTenant(workspaceId, done);
  });
}
