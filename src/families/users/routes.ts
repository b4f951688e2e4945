import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { ServiceDeps } from '../../context.js';
import { principalOf } from '../../http/auth.js';
import { findUserWithTeams, listTeams } from './queries.js';
import { TeamList, User } from './schemas.js';

export const usersRoutes: FastifyPluginAsyncTypebox<{ deps: ServiceDeps }> = async (app, { deps }) => {
  app.get(
    '/me',
    {
      config: { right: 'users:read' },
      schema: {
        operationId: 'getCurrentUser',
        'x-reference-id': 'E14',
        summary: 'The authenticated user',
        description: "The token's user, with the teams they belong to.",
        tags: ['Users'],
        response: { 200: Type.Ref(User) },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const user = await findUserWithTeams(deps.tenantDb(principal.workspaceId), principal.workspaceId, principal.userId);
      if (!user) throw new Error('An authenticated user vanished');
      return user;
    },
  );

  app.get(
    '/teams',
    {
      config: { right: 'users:read' },
      schema: {
        operationId: 'listTeams',
        summary: 'Teams of the workspace',
        description: "Every team of the token's workspace, by name (case-insensitive). Teams are made with `cli user create --team`.",
        tags: ['Teams'],
        response: { 200: TeamList },
      },
    },
    async (request) => {
      const { workspaceId } = principalOf(request);
      return { results: await listTeams(deps.tenantDb(workspaceId), workspaceId) };
    },
  );
};
